"""pyagc 1.1.2 (models/s2cag.py:62 `compute_normalized_matrices`, :337 `MS2CAG.embed`): the proven findings of
`inplacefix check` on main 7911fb7 (stop 53, fresh53). `x_row_norms = torch.norm(x, ...)` / `Z_norms =
torch.norm(Z, ...)` (norm saves its output), then `...[... == 0] = 1.0` writes it (an all-false mask still bumps
the version). compute_normalized_matrices, power_iteration and MS2CAG._compute_nsr/embed are compiled alone from
the shipped file; stand-ins for torch_geometric's add_remaining_self_loops, to_undirected and degree (not installed
here). embed stops right after Z_hat (:338). Node features requiring grad raise: real by this file's convention
(S2CAG clusters fixed features, no training)."""

import _shim  # noqa: F401
import linecache
import types

import torch
from _check import attempt
from _fresh53 import compile_alone, src, then

SRC = src("pyagc/models/s2cag.py")
assert linecache.getline(SRC, 62).strip() == "x_row_norms[x_row_norms == 0] = 1.0"
assert linecache.getline(SRC, 337).strip() == "Z_norms[Z_norms == 0] = 1.0"
OUT62 = "x_row_norms = x_row_norms.masked_fill(x_row_norms == 0, 1.0)"
OUT337 = "Z_norms = Z_norms.masked_fill(Z_norms == 0, 1.0)"


def add_remaining_self_loops(edge_index, num_nodes):
    loops = torch.arange(num_nodes).repeat(2, 1)
    return torch.cat([edge_index[:, edge_index[0] != edge_index[1]], loops], 1), None


def to_undirected(edge_index):
    both = torch.cat([edge_index, edge_index.flip(0)], 1)
    return torch.unique(both, dim=1)


def degree(index, num_nodes, dtype):
    return torch.zeros(num_nodes, dtype=dtype).index_add_(0, index, torch.ones(index.numel(), dtype=dtype))


NS = {"torch": torch, "Tensor": torch.Tensor, "add_remaining_self_loops": add_remaining_self_loops,
      "to_undirected": to_undirected, "degree": degree}
EDGES = torch.tensor([[0, 1, 2, 3, 4], [1, 2, 3, 4, 0]])


def run62(replace, grad=True):
    def go():
        ns = compile_alone(SRC, {"compute_normalized_matrices"}, dict(NS), replace=replace)
        x = torch.randn(5, 3, requires_grad=grad)
        _, x_normalized = ns["compute_normalized_matrices"](x, EDGES, 5)
        if grad:
            x_normalized.sum().backward()
    return go


def run337(replace, grad=True):
    def go():
        replace338 = {338: then(linecache.getline(SRC, 338).strip(), "return Z_hat")}
        ns = compile_alone(SRC, {"compute_normalized_matrices", "power_iteration", "MS2CAG._compute_nsr",
                                 "MS2CAG.embed"}, dict(NS), replace={62: OUT62, **replace338, **replace})
        me = types.SimpleNamespace(T=3, alpha=0.5)
        me._compute_nsr = lambda x, e, n=None: ns["_compute_nsr"](me, x, e, n)
        x = torch.randn(5, 3, requires_grad=grad)
        z_hat = ns["embed"](me, x, EDGES)
        if grad:
            z_hat.sum().backward()
    return go


F62, F337 = "pyagc/models/s2cag.py:62:IPF104", "pyagc/models/s2cag.py:337:IPF104"
attempt(F62, "path", "node features requiring grad, as shipped, backward from the normalized features", run62({}))
attempt(F62, "control", ":62 as masked_fill out of place", run62({62: OUT62}))
attempt(F62, "context", "fixed features without grad (S2CAG.fit): runs", run62({}, grad=False))
attempt(F337, "path", "MS2CAG.embed on features requiring grad (:62 out of place), backward from Z_hat", run337({}))
attempt(F337, "control", ":337 out of place too", run337({337: OUT337}))
