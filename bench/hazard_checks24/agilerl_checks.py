"""agilerl (NeuralTS / NeuralUCB bandits): the two proven findings of `inplacefix check` on main d1b4fd6
(stop 51, prec51b): the Sherman-Morrison update `self.sigma_inv -= (self.sigma_inv @ v @ v.T @ self.sigma_inv) /
(1 + v.T @ self.sigma_inv @ v)` (neural_ts_bandit.py:286, neural_ucb_bandit.py:287), reported as "sigma_inv saved
by @". `sigma_inv` is `self.lamb * torch.eye(self.numel)` (line 214/215, no grad) and `v = g[action]` where `g` is
`torch.zeros(...)` whose rows are `torch.cat([w.grad.detach().flatten() ...]) / np.sqrt(...)`: nothing in the
update requires grad, so the matmuls save nothing and no graph exists. agilerl's imports (gymnasium, its evolvable
networks, ...) are not met: the driver replays the shipped statements that build sigma_inv and g (a Linear as the
actor's output layer, the `for k, fx in enumerate(mu)` arm, with torch.autograd.grad in place of `fx.backward()` + `w.grad`) and execs the shipped update lines read from each file.
Path: obs and the layer's parameters requiring grad, the update, then backward from a loss of the layer (and a
check that sigma_inv has no grad_fn): runs. Control: g's rows taken without `.detach()` and with create_graph
(so v requires grad), the same update lines, backward through sigma_inv: raises (the matmul's saved sigma_inv
modified). False: every operand is grad-free; the check reads `torch.cat(...) / np.sqrt(layer.weight.size(0))`
as requiring grad (an unresolved call's result as an operand; prec51b_probes.py `Bandit`)."""

import _shim  # noqa: F401
import linecache
import os

import numpy as np
import torch
from torch import nn
from _check import attempt
from _prec51b import PK2

FILES = {"agilerl/algorithms/neural_ts_bandit.py": 286, "agilerl/algorithms/neural_ucb_bandit.py": 287}


def update_code(rel, line):
    path = os.path.join(PK2, rel)
    text = "".join(linecache.getline(path, n) for n in range(line - 1, line + 3))
    assert "v = g[action].unsqueeze(-1)" in text and "self.sigma_inv -= (self.sigma_inv @ v" in text, text
    import textwrap
    return textwrap.dedent(text)


class Agent:
    """The attributes the shipped lines read (init_params, lines 202-217)."""

    def __init__(self):
        torch.manual_seed(0)
        self.exp_layer = nn.Linear(3, 1)
        self.numel = sum(w.numel() for w in self.exp_layer.parameters() if w.requires_grad)
        self.sigma_inv = 1.0 * torch.eye(self.numel)


def run(rel, line, detach):
    def go():
        self = Agent()
        obs = torch.randn(2, 3, requires_grad=True)
        mu = self.exp_layer(obs).reshape(-1)
        g = torch.zeros((2, self.numel))
        for k, fx in enumerate(mu):
            self.exp_layer.zero_grad()
            grads = torch.autograd.grad(fx, list(self.exp_layer.parameters()), retain_graph=True,
                                        create_graph=not detach)
            g[k] = torch.cat([(w.detach() if detach else w).flatten() for w in grads]) / np.sqrt(
                self.exp_layer.weight.size(0))
        exec(update_code(rel, line), {"torch": torch}, {"self": self, "g": g, "action": 1})
        if detach:
            assert self.sigma_inv.grad_fn is None
            mu.sum().backward()
        else:
            self.sigma_inv.sum().backward()
    return go


for rel, line in FILES.items():
    finding = f"{rel}:{line}:IPF101"
    attempt(finding, "path", "the update as shipped (g from detached grads), then backward of the actor's output",
            run(rel, line, True))
    attempt(finding, "control", "g's rows not detached (create_graph): backward through sigma_inv",
            run(rel, line, False))
