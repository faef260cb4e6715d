# helper module of p06 (a Glow-style `thops`): splits a feature map into two halves along channels
import torch


def split_feature(tensor, kind="split"):
    c = tensor.size(1)
    if kind == "split":
        return tensor[:, : c // 2, ...], tensor[:, c // 2:, ...]
    return tensor[:, 0::2, ...], tensor[:, 1::2, ...]


def cat_feature(a, b):
    return torch.cat((a, b), dim=1)
