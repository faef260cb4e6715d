"""torchref 0.7.0 (model/disorder_field.py:808, `DisorderFieldTensor._fit_nodes`): the proven finding of
`inplacefix check` on main 7911fb7 (stop 53, fresh53). `dnode = torch.cdist(node_pos, node_pos)` (cdist saves its
output), then `dnode.fill_diagonal_(inf)`. dnode feeds only `spacing = float(dnode.min(dim=1).values.median())`,
a Python float, so no backward can reach cdist's node: false in every use. _fit_nodes is compiled alone from the
shipped file; stand-in self: `_weights` (Gaussian weights of the atom-node distances), a payload whose `fit`
solves a least-squares from the dense weights, epsilon, refine_positions off. Context: the method stopped after
:808 returning dnode, differentiated: raises."""

import _shim  # noqa: F401
import linecache
import math
import types

import torch
from _check import attempt
from _fresh53 import compile_alone, src

SRC = src("torchref/model/disorder_field.py")
assert linecache.getline(SRC, 808).strip() == 'dnode.fill_diagonal_(float("inf"))'


def me():
    def weights(xyz, node_pos, neighbor_list, log_sigma):
        d = torch.cdist(xyz, node_pos).gather(1, neighbor_list)
        return torch.exp(-d ** 2 / (2 * log_sigma.exp()[neighbor_list] ** 2))
    fit = lambda target, w, eps, xyz, node_pos, nl: torch.linalg.lstsq(w + eps, target[:, None]).solution
    return types.SimpleNamespace(epsilon=1e-3, _weights=weights, _refine_positions=False,
                                 _payload=types.SimpleNamespace(fit=fit))


def run(replace, stop=False):
    def go():
        ns = compile_alone(SRC, {"DisorderFieldTensor._fit_nodes"}, {"torch": torch, "math": math}, replace=replace)
        torch.manual_seed(0)
        xyz = torch.randn(10, 3, requires_grad=True)
        node_pos = torch.randn(4, 3, requires_grad=True)
        out = ns["_fit_nodes"](me(), torch.randn(10), xyz, node_pos, torch.randint(0, 4, (10, 2)))
        (out[torch.isfinite(out)] if stop else out).sum().backward()
    return go


F = "torchref/model/disorder_field.py:808:IPF103"
attempt(F, "path", "atoms and node positions requiring grad, backward from the node storage: dnode only gives a "
        "float spacing, runs", run({}))
attempt(F, "context", "stopped after :808 returning dnode, differentiated: raises",
        run({808: 'dnode.fill_diagonal_(float("inf"))\nreturn dnode'}, stop=True))
attempt(F, "control", "that, with :808 out of place (masked_fill of the diagonal): runs",
        run({808: 'dnode = dnode.masked_fill(torch.eye(n_k, dtype=torch.bool), float("inf"))\nreturn dnode'}, stop=True))
