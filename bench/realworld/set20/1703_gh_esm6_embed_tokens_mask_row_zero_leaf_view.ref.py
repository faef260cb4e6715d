# reference fix for 1703: commit 0ae539b (PR #6) in the library module (1703helpers_esm_model_fixed.py): the
# mask row is zeroed in the loaded state dict, not in the model's parameter.
# and the loaded embedding (final state: the mask row is zero).
import importlib
import os
import sys
from argparse import Namespace

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
esm = importlib.import_module("1703helpers_esm_model_fixed")


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
