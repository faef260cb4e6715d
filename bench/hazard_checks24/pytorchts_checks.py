"""pytorchts 0.6.0 (package `pts`, sdist): the one proven finding of `inplacefix check` on main e0a91e4 (stop 50,
prec50b): `MADE.inverse` (modules/flows.py) runs the autoregressive inverse
`for i in self.input_degrees: m, loga = self.net(self.net_input(x, y)).chunk(2, -1)` (line 294:
`net_input` is a MaskedLinear, `F.linear(x, self.weight * self.mask, ...)`, which saves `x` while the weights
require grad) then writes `x[..., i] = u[..., i] * torch.exp(loga[..., i]) + m[..., i]` (line 295). The file
imports torch only; it is loaded as it is (importlib from its path, the package `__init__` needs gluonts) from
the unpacked sdist under $PREC50B_SITE2 (default /work/tmp/prec50b/pk2). The path: MADE in training (parameters
requiring grad), `inverse(u)` (what `Flow.sample` / MAF's `inverse` run), backward through the sample: raises.
Control: the same loop with `x = x.clone()` before the write (each step's saved input kept): runs. Context:
pytorchts samples (`Flow.sample`) in prediction, under no_grad; a user training through samples (or calling
`inverse` with grad) hits it: real by this file's convention (parameters requiring grad raise)."""

import _shim  # noqa: F401
import importlib.util
import os

import torch
from _check import attempt, expect_line

PATH = os.path.join(os.environ.get("PREC50B_SITE2", "/work/tmp/prec50b/pk2"), "pts", "modules", "flows.py")
spec = importlib.util.spec_from_file_location("prec50b_pts_flows", PATH)
flows = importlib.util.module_from_spec(spec)
spec.loader.exec_module(flows)
expect_line(flows.MADE.inverse, 294, "m, loga = self.net(self.net_input(x, y)).chunk(chunks=2, dim=-1)")
expect_line(flows.MADE.inverse, 295, "x[..., i] = u[..., i] * torch.exp(loga[..., i]) + m[..., i]")
FINDING = "pts/modules/flows.py:295:IPF104"


def inverse_with_copy(self, u, y=None):
    """MADE.inverse with `x = x.clone()` before the write (the control)."""
    x = torch.zeros_like(u)
    for i in self.input_degrees:
        m, loga = self.net(self.net_input(x, y)).chunk(chunks=2, dim=-1)
        x = x.clone()
        x[..., i] = u[..., i] * torch.exp(loga[..., i]) + m[..., i]
    return x, loga


def run(control, cond):
    def go():
        torch.manual_seed(0)
        made = flows.MADE(4, 8, 1, cond_label_size=3 if cond else None).train()
        u = torch.randn(5, 4)
        y = torch.randn(5, 3) if cond else None
        x, ladj = (inverse_with_copy(made, u, y) if control else made.inverse(u, y))
        (x.pow(2).sum() + ladj.sum()).backward()
    return go


attempt(FINDING, "path", "MADE(4, 8, 1) in training, parameters requiring grad, inverse(u), backward",
        run(False, False))
attempt(FINDING, "path", "the same, conditional (cond_label_size=3)", run(False, True))
attempt(FINDING, "control", "the loop with x = x.clone() before the write", run(True, False))
