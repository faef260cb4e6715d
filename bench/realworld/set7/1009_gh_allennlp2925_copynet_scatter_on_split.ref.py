# reference fix for 1009: PR #2925 in the library module (1009helpers_allennlp_copynet_fixed.py): out-of-place scatter.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
copynet = importlib.import_module("1009helpers_allennlp_copynet_fixed")


class ScoreHead(nn.Module):
    def __init__(self, hidden=8, vocab=6):
        super().__init__()
        self.hidden = nn.Parameter(torch.randn(2, hidden))
        self.output_generation_layer = nn.Linear(hidden, vocab)
        self.output_copying_layer = nn.Linear(hidden, hidden)

    def forward(self, encoded_source):
        generation_scores = self.output_generation_layer(self.hidden)
        copy_projection = torch.tanh(self.output_copying_layer(encoded_source))
        copy_scores = torch.einsum('gsh,gh->gs', copy_projection, self.hidden)
        return generation_scores, copy_scores


def compute():
    torch.manual_seed(0)
    head = ScoreHead()
    model = copynet.CopyNetSeq2Seq(target_vocab_size=6, oov_index=1)
    encoded_source = torch.randn(2, 4, 8)
    state = {
        "source_to_target": torch.tensor([[3, 1, 4, 3], [2, 5, 1, 2]]),
        "source_token_ids": torch.tensor([[0, 1, 2, 0], [0, 1, 2, 0]]),
        "source_mask": torch.ones(2, 6),
    }
    generation_scores, copy_scores = head(encoded_source)
    final_log_probs = model.take_search_step(generation_scores, copy_scores, state)
    top_log_probs, top_tokens = final_log_probs.topk(3, dim=-1)
    gold = torch.tensor([3, 2])
    risk = (top_tokens != gold[:, None]).float()
    loss = (torch.softmax(top_log_probs, -1) * risk).sum(-1).mean()
    loss.backward()
    return {n: p.grad for n, p in head.named_parameters()}


if __name__ == "__main__":
    compute()
