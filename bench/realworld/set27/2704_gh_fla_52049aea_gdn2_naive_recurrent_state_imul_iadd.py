# source: https://github.com/fla-org/flash-linear-attention/commit/52049aea7d1e77d8349655a5689089c4c1bb980b
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# flash-linear-attention, fla/ops/gdn2/naive.py, naive_recurrent_gdn2 (the recurrent reference the tests
# differentiate against the Triton kernels): the state is updated in place at every step, `S *= g_i[..., None].exp()`
# then `S += torch.einsum(..., v_i - (k_i[..., None] * S).sum(-2))`; the product `k_i[..., None] * S` saved S, and so
# does the output einsum, so the next in-place update makes the backward fail with "modified by an inplace
# operation". Commit 52049aea ("Fix inplace mod") writes `S = S * ...` and `S = S + ...`.
# The library module is 2704helpers_fla_gdn2_naive.py (ref: ..._fixed.py).
# Stand-ins here: the shapes of a small test (batch 2, 4 steps, 2 heads, key dim 4, value dim 3), random q, k, v
# leaves, per-key log-gates from logsigmoid, beta from a sigmoid (as the GDN2 tests build them), k L2-normalised, no
# initial state, and a squared-output loss.
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
naive = importlib.import_module("2704helpers_fla_gdn2_naive")


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
