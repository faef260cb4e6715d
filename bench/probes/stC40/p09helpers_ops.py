# helper module of p09 (a project's ops.py)
import torch


def split_gate(x):
    return torch.chunk(x, 2, dim=-1)
