# reference fix for 623: the QA head of 623helpers_transformers_bert_qa_fixed.py (out-of-place clamp, as in later
# transformers); SWEP's model code is unchanged.
import os
import sys
from importlib import import_module
from math import sqrt

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
_hf = import_module("623helpers_transformers_bert_qa_fixed")
BertForQuestionAnswering, BertConfig = _hf.BertForQuestionAnswering, _hf.BertConfig


class GaussianKLLoss(nn.Module):
    def __init__(self):
        super(GaussianKLLoss, self).__init__()

    def forward(self, mu1, logvar1, mu2, logvar2):
        numerator = logvar1.exp() + torch.pow(mu1 - mu2, 2)
        fraction = torch.div(numerator, (logvar2.exp()))
        kl = 0.5 * torch.sum(logvar2 - logvar1 + fraction - 1, dim=1)
        return kl.mean(dim=0)


class VariationalBert(nn.Module):
    def __init__(self, hidden_size=16):
        super(VariationalBert, self).__init__()
        self.bert_model = BertForQuestionAnswering(BertConfig(hidden_size=hidden_size))
        self.noise_net = nn.Sequential(nn.Linear(hidden_size, hidden_size),
                                       nn.ReLU(),
                                       nn.Linear(hidden_size, hidden_size * 2))
        config = self.bert_model.config
        self.dropout = config.hidden_dropout_prob  # 0.1

    def forward(self, input_ids, attention_mask, token_type_ids, start_positions=None, end_positions=None):
        embeddings = self.bert_model.get_input_embeddings()
        encoder = self.bert_model.bert
        with torch.no_grad():
            encoder_inputs = {"input_ids": input_ids,
                              "attention_mask": attention_mask,
                              "token_type_ids": token_type_ids}
            outputs = encoder(**encoder_inputs)
            hiddens = outputs[0]

        mask = attention_mask.view(-1)
        indices = (mask == 1)
        mu_logvar = self.noise_net(hiddens)
        mu, log_var = torch.chunk(mu_logvar, 2, dim=-1)
        zs = mu + torch.randn_like(mu) * torch.exp(0.5 * log_var)
        noise = zs

        prior_mu = torch.ones_like(mu)
        prior_var = torch.ones_like(mu) * sqrt(self.dropout / (1 - self.dropout))
        prior_logvar = torch.log(prior_var)

        kl_criterion = GaussianKLLoss()
        h = hiddens.size(-1)
        _mu = mu.view(-1, h)[indices]
        _log_var = log_var.view(-1, h)[indices]
        _prior_mu = prior_mu.view(-1, h)[indices]
        _prior_logvar = prior_logvar.view(-1, h)[indices]
        kl = kl_criterion(_mu, _log_var, _prior_mu, _prior_logvar)

        inputs_embeds = embeddings(input_ids)
        inputs = {"inputs_embeds": inputs_embeds * noise,
                  "attention_mask": attention_mask,
                  "token_type_ids": token_type_ids,
                  "start_positions": start_positions,
                  "end_positions": end_positions}
        noise_outputs = self.bert_model(**inputs)
        noise_loss = noise_outputs[0]

        new_inputs = {"inputs_embeds": inputs_embeds,
                      "attention_mask": attention_mask,
                      "token_type_ids": token_type_ids,
                      "start_positions": start_positions,
                      "end_positions": end_positions}
        outputs = self.bert_model(**new_inputs)
        nll = outputs[0]
        loss = 0.5 * (nll + noise_loss)
        return (loss, kl)


def compute():
    torch.manual_seed(0)
    model = VariationalBert()
    input_ids = torch.randint(0, 30, (4, 10))
    attention_mask = torch.ones(4, 10, dtype=torch.long)
    token_type_ids = torch.zeros(4, 10, dtype=torch.long)
    start_positions = torch.tensor([1, 3, 12, 0])  # one answer outside the window (clamped, then ignored)
    end_positions = torch.tensor([2, 5, 14, 4])
    loss, kl = model(input_ids, attention_mask, token_type_ids, start_positions, end_positions)
    loss = loss + kl
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters() if p.grad is not None}


if __name__ == "__main__":
    compute()
