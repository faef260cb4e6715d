"""ptlflow 0.4.2: the two proven findings of `inplacefix check` on main e0a91e4 (stop 50, prec50b), both in
`SGABlock.forward` (models/separableflow/cost_agg.py): `x += rem` (line 193, IPF101) and `self.relu(x)` with
`self.relu = nn.ReLU(inplace=True)` (line 177, applied at 194, IPF102), reported as writing "the output of
nn.Sequential via torch.nn.ReLU (line 160) at line 188" (`x = self.bn_relu(x)`, BatchNorm3d + ReLU(inplace)).
But line 189 rebinds `x = self.conv_refine(x)` (a BasicConv: Conv3d then BatchNorm3d, relu=False), so lines 193
and 194 write BatchNorm3d's fresh output, which nothing saved (BatchNorm saves its input; `+=` saves nothing);
ReLU's saved output (line 188) is read by the Conv3d and never written after. The SGA op (GANet's compiled CUDA
extension, not built here) is replaced by a differentiable torch stand-in (x scaled by the four normalised
guidance parts); the file is loaded as it is (it imports torch and numpy only), with empty parent packages and
the stand-in as `.libs.GANet.modules.GANet`. Sources: the unpacked wheel under $PREC50B_SITE (default
/work/tmp/prec50b/pk). The path: SGABlock(refine=True) (as SeparableFlow's cost aggregation builds them) in
training, cost volume, guidance and parameters requiring grad, backward: runs (FALSE for both). Also
refine=False (`x = self.bn(x)`): runs."""

import _shim  # noqa: F401
import importlib
import os
import sys
import types

import torch
from _check import attempt, expect_line
from torch import nn

SITE = os.environ.get("PREC50B_SITE", "/work/tmp/prec50b/pk")
BASE = "ptlflow/models/separableflow"


class SGAStandIn(nn.Module):
    """Stands for GANet's semi-global aggregation (CUDA): a differentiable mix of x by the guidance weights."""

    def forward(self, x, k1, k2, k3, k4):
        return x * (k1.sum(1, keepdim=True) + k2.mean(1, keepdim=True)) + x.roll(1, -1) * (k3 - k4)[:, :1]


for name in ("ptlflow", "ptlflow.models", "ptlflow.models.separableflow", "ptlflow.models.separableflow.libs",
             "ptlflow.models.separableflow.libs.GANet", "ptlflow.models.separableflow.libs.GANet.modules"):
    mod = types.ModuleType(name)
    mod.__path__ = [os.path.join(SITE, *name.split("."))]
    sys.modules[name] = mod
ganet = types.ModuleType("ptlflow.models.separableflow.libs.GANet.modules.GANet")
ganet.SGA = SGAStandIn
sys.modules[ganet.__name__] = ganet
cost_agg = importlib.import_module("ptlflow.models.separableflow.cost_agg")
expect_line(cost_agg.SGABlock.forward, 193, "x += rem")
expect_line(cost_agg.SGABlock.forward, 194, "return self.relu(x)")
expect_line(cost_agg.SGABlock.__init__, 177, "self.relu = nn.ReLU(inplace=True)")
F193 = f"{BASE}/cost_agg.py:193:IPF101"
F177 = f"{BASE}/cost_agg.py:177:IPF102"


def run(refine):
    def go():
        torch.manual_seed(0)
        block = cost_agg.SGABlock(channels=8, refine=refine).train()
        x = torch.randn(2, 8, 4, 6, 6, requires_grad=True)
        g = torch.randn(2, 20, 4, 6, 6, requires_grad=True)
        out = block(x, g)
        out.pow(2).sum().backward()
        assert x.grad is not None and g.grad is not None
    return go


for finding in (F193, F177):
    attempt(finding, "path", "SGABlock(channels=8, refine=True) in training, cost volume/guidance/parameters "
            "requiring grad, backward", run(True))
    attempt(finding, "path", "SGABlock(refine=False) the same", run(False))
