# source: https://github.com/rusty1s/pytorch_scatter/issues/119
# pattern: inplace_method
# codemod_fixable: yes
# error: A
# ref_semantics: same
# torch_scatter 2.0.3 scatter_softmax() (401helpers_torch_scatter.py, the package's composite/softmax.py) does
# `recentered_scores.exp_()` and returns `recentered_scores_exp.div_(normalizing_constants)`: div_ overwrites the
# exp_ result that ExpBackward saved. The reporter used it for attention coefficients in a GAT; the issue's own
# minimal example is `scatter_softmax(src, index)` on a 1-D src. Fixed in the package by commit cf8cf0c
# ("fix backward pass"): `exp()` and `div()` out of place. The bug is in the library module, not the caller.
import os
import sys
from importlib import import_module

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module

scatter_softmax = import_module("401helpers_torch_scatter").scatter_softmax


class GATLayer(nn.Module):
    """Edge-softmax attention layer as in the reporter's GAT project (single head)."""

    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.fc = nn.Linear(in_dim, out_dim, bias=False)
        self.attn = nn.Linear(2 * out_dim, 1, bias=False)

    def forward(self, x, edge_index):
        src, dst = edge_index
        h = self.fc(x)
        e = nn.functional.leaky_relu(self.attn(torch.cat([h[src], h[dst]], dim=-1)).squeeze(-1), 0.2)
        alpha = scatter_softmax(e, dst)
        out = torch.zeros_like(h).index_add(0, dst, alpha.unsqueeze(-1) * h[src])
        return out


def compute():
    torch.manual_seed(0)
    # the minimal example
    src = torch.randn(6, requires_grad=True)
    index = torch.tensor([0, 1, 0, 1, 2, 1])
    softmax_out = scatter_softmax(src, index)
    out = torch.sum(softmax_out * torch.arange(6.0))
    out.backward()
    # the GAT use
    layer = GATLayer(4, 3)
    x = torch.randn(5, 4)
    edge_index = torch.tensor([[0, 1, 2, 3, 4, 0, 2], [1, 0, 1, 2, 3, 4, 4]])
    layer(x, edge_index).pow(2).sum().backward()
    grads = {"src": src.grad}
    grads.update({n: p.grad for n, p in layer.named_parameters()})
    return grads


if __name__ == "__main__":
    compute()
