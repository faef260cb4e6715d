# reference fix for 1006: commit d5480cb in the library module (1006helpers_openfold_template_fixed.py): unbind, process, cat.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
template = importlib.import_module("1006helpers_openfold_template_fixed")


def compute():
    torch.manual_seed(0)
    embedder = nn.Linear(6, 8)
    block = template.TemplatePairStackBlock(
        c_t=8, c_hidden_tri_att=4, c_hidden_tri_mul=4, no_heads=1, pair_transition_n=2, dropout_rate=0.25, inf=1e9)
    embedder.train()
    block.train()
    t_feats = torch.randn(1, 2, 5, 5, 6)
    mask = torch.ones(1, 2, 5, 5)
    mask[..., 4, :] = 0.0
    z = embedder(t_feats)
    z = block(z, mask, chunk_size=None)
    loss = (z ** 2).mean()
    loss.backward()
    grads = {"embedder." + n: p.grad for n, p in embedder.named_parameters()}
    grads.update({"block." + n: p.grad for n, p in block.named_parameters() if p.grad is not None})
    return grads


if __name__ == "__main__":
    compute()
