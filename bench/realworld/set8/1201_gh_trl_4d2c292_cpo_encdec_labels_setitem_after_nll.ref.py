# reference fix for 1201: commit 4d2c29291 in the library module (1201helpers_trl_cpo_trainer_fixed.py): the labels
# cloned before the NLL loss.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
cpo = importlib.import_module("1201helpers_trl_cpo_trainer_fixed")


class TinySeq2Seq(nn.Module):
    def __init__(self, vocab=9, d=6):
        super().__init__()
        self.enc_emb = nn.Embedding(vocab, d)
        self.dec_emb = nn.Embedding(vocab, d)
        self.lm_head = nn.Linear(d, vocab)

    def forward(self, input_ids, attention_mask=None, decoder_input_ids=None):
        enc = self.enc_emb(input_ids) * attention_mask[..., None]
        ctx = enc.sum(1, keepdim=True) / attention_mask.sum(1, keepdim=True)[..., None]
        return self.lm_head(torch.tanh(self.dec_emb(decoder_input_ids) + ctx))


def compute():
    torch.manual_seed(0)
    model = TinySeq2Seq()
    trainer = cpo.CPOTrainer(model, beta=0.1, is_encoder_decoder=True)
    prompt = torch.randint(1, 9, (2, 5))
    concatenated_batch = {
        "concatenated_input_ids": torch.cat([prompt, prompt]),
        "concatenated_attention_mask": torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]] * 2),
        "concatenated_labels": torch.tensor([[3, 4, 5, 1], [2, 6, -100, -100],
                                             [7, 8, 1, -100], [5, 5, 2, 1]]),
    }
    loss, metrics = trainer.get_batch_loss_metrics(model, concatenated_batch, len_chosen=2)
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
