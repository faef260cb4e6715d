# reference fix for 2704: commit 52049aea in the library module (2704helpers_fla_gdn2_naive_fixed.py):
# `S = S * g_i[..., None].exp()` and `S = S + torch.einsum(...)` out of place.
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
naive = importlib.import_module("2704helpers_fla_gdn2_naive_fixed")


def compute():
    torch.manual_seed(0)
    B, T, H, K, V = 2, 4, 2, 4, 3
    q = torch.randn(B, T, H, K, requires_grad=True)
    k = torch.randn(B, T, H, K, requires_grad=True)
    v = torch.randn(B, T, H, V, requires_grad=True)
    g_raw = torch.randn(B, T, H, K, requires_grad=True)
    beta_raw = torch.randn(B, T, H, requires_grad=True)
    g = F.logsigmoid(g_raw)
    beta = beta_raw.sigmoid()
    o, _ = naive.naive_recurrent_gdn2(q, F.normalize(k, p=2, dim=-1), v, g, beta)
    loss = (o ** 2).sum()
    loss.backward()
    return {"q.grad": q.grad, "k.grad": k.grad, "v.grad": v.grad, "g_raw.grad": g_raw.grad,
            "beta_raw.grad": beta_raw.grad, "o": o.detach()}


if __name__ == "__main__":
    compute()
