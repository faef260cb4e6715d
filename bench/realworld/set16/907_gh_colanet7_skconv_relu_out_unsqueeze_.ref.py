# reference fix for 907: PR #7, indexing with None instead of unsqueeze_ in SKConv / merge_block (helper _fixed).
import importlib
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
merge_unit = importlib.import_module("907helpers_cola_merge_unit_fixed")


class COLANetStandIn(nn.Module):
    def __init__(self, n_colors=1, n_feats=32):
        super().__init__()
        self.head = nn.Conv2d(n_colors, n_feats, 3, padding=1)
        self.body = merge_unit.merge_block(in_channels=n_feats, out_channels=n_feats, vector_length=16)
        self.tail = nn.Conv2d(n_feats, n_colors, 3, padding=1)

    def forward(self, x):
        res = self.head(x)
        res = self.body(res)
        return x + self.tail(res)


def compute():
    torch.manual_seed(0)
    model = COLANetStandIn()
    model.train()
    clean = torch.rand(2, 1, 8, 8)
    noisy = clean + torch.randn(2, 1, 8, 8) * (25 / 255)
    loss = F.l1_loss(model(noisy), clean)
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
