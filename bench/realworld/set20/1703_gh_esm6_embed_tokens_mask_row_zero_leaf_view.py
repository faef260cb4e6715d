# source: https://github.com/facebookresearch/esm/commit/0ae539bc593ec1ce7def2b384eb91b1eeb34a3c0
# pattern: inplace_method
# codemod_fixable: yes
# error: B
# ref_semantics: differs
# ESM (protein language models), ProteinBertModel._init_submodules_esm1b: the ESM-1b token-dropout set-up zeroes the
# embedding row of the mask token in place, `self.embed_tokens.weight[self.mask_idx].zero_()`, a write into a view of
# the nn.Embedding weight (a leaf that requires grad): building the model fails with "a view of a leaf Variable that
# requires grad is being used in an in-place operation". Commit 0ae539b (PR #6, "zeroing slice of Param was tracked by
# autograd") removes the line from the model and zeroes that row of the checkpoint's state dict in
# load_model_and_alphabet_core before `load_state_dict`.
# The library module is 1703helpers_esm_model.py (ref: 1703helpers_esm_model_fixed.py).
# Stand-ins (see the helper): a 33-token alphabet, embed_dim 8, no transformer layers; the checkpoint is the state
# dict of a seeded model with random weights (`model_data`), built under no_grad like a saved training checkpoint;
# the program loads it, runs a masked-LM step on two sequences (one with the mask token), and returns the gradients
# and the loaded embedding (final state: the mask row is zero).
import importlib
import os
import sys
from argparse import Namespace

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
esm = importlib.import_module("1703helpers_esm_model")


class Alphabet:
    def __init__(self):
        self.all_toks = ["<cls>", "<pad>", "<eos>"] + ["T%d" % i for i in range(29)] + ["<mask>"]
        self.cls_idx, self.padding_idx, self.eos_idx, self.mask_idx = 0, 1, 2, 32

    def __len__(self):
        return len(self.all_toks)


def compute():
    torch.manual_seed(0)
    alphabet = Alphabet()
    args = Namespace(arch="roberta_large", embed_dim=8, max_positions=16, layers=0)
    checkpoint = {
        "embed_tokens.weight": torch.randn(33, 8),
        "embed_positions.weight": torch.randn(16, 8),
        "emb_layer_norm_before.weight": torch.ones(8), "emb_layer_norm_before.bias": torch.zeros(8),
        "emb_layer_norm_after.weight": torch.ones(8), "emb_layer_norm_after.bias": torch.zeros(8),
        "lm_head.dense.weight": torch.randn(8, 8) * 0.3, "lm_head.dense.bias": torch.zeros(8),
        "lm_head.layer_norm.weight": torch.ones(8), "lm_head.layer_norm.bias": torch.zeros(8),
        "lm_head.bias": torch.zeros(33),
    }
    checkpoint["lm_head.weight"] = checkpoint["embed_tokens.weight"]  # tied, as in the saved model
    model_data = {"args": args, "model": checkpoint}
    model, alphabet = esm.load_model_and_alphabet_core(model_data, alphabet)
    tokens = torch.tensor([[0, 5, 32, 7, 2, 1], [0, 9, 4, 6, 11, 2]])
    targets = torch.tensor([[0, 5, 13, 7, 2, 1], [0, 9, 4, 6, 11, 2]])
    logits = model(tokens)["logits"]
    loss = F.cross_entropy(logits.reshape(-1, 33), targets.reshape(-1), ignore_index=alphabet.padding_idx)
    loss.backward()
    return {
        "embed_tokens.weight.grad": model.embed_tokens.weight.grad,
        "lm_head.dense.weight.grad": model.lm_head.dense.weight.grad,
        "embed_tokens.weight": model.embed_tokens.weight.detach().clone(),
    }


if __name__ == "__main__":
    compute()
