# source: https://github.com/allenai/allennlp/pull/2925
# pattern: inplace_method
# codemod_fixable: yes
# error: C
# ref_semantics: same
# AllenNLP, allennlp/models/encoder_decoders/copynet_seq2seq.py, CopyNetSeq2Seq.take_search_step (the beam-search step
# function): the normalised scores are split, `generation_log_probs, copy_log_probs = log_probs.split([...], dim=-1)`,
# and _gather_final_log_probs adds the copy scores into the generation scores in place,
# `generation_log_probs.scatter_(-1, source_to_target_slice.unsqueeze(-1), combined_scores.unsqueeze(-1))`. PR #2925
# "CopyNet: replace in-place tensor operation with out-of-place equivalent" (merged): "I was trying to implement an
# Expected Risk Minimization training regime with the CopyNet model, which uses the result of the beam search to
# compute the loss. Turns out there was an in-place op `Tensor.scatter_` that was used in the step function of the
# search, making the backwards pass of training break": `generation_log_probs = generation_log_probs.scatter(...)`,
# inserted at the head of the list afterwards. On current PyTorch the in-place scatter_ on a split output fails at
# once (family C); on the 2019 PyTorch it failed in backward.
# The library module is 1009helpers_allennlp_copynet.py (ref: 1009helpers_allennlp_copynet_fixed.py).
# Stand-ins: one search step for a group of 2 hypotheses; the decoder state is a learned hidden vector per hypothesis,
# generation scores a linear layer on it, copy scores its dot product with 4 encoded source tokens (trimmed source
# length 4, target vocabulary 6, OOV index 1, one source token out of vocabulary and one repeated); ERM loss: the
# expected risk of the 3 best extended-vocabulary tokens, risk 0 for the gold token and 1 otherwise.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
copynet = importlib.import_module("1009helpers_allennlp_copynet")


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
