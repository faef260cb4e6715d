"""pytorch-image-translation-models 0.6.0 (src/models/decent/flows/maf.py:156 `MADE.inverse`): the proven finding of
`inplacefix check` (stop 54, fresh54b, end of stop). Each step of the inverse runs `self.net_input(x, y)`, whose
`F.linear(x, self.weight * self.mask, ...)` saves x for the weight's gradient, then `x[:, i] = ...` writes x. With
grad on, any backward from the sampled x (or loga) raises: the MADE's weights require grad by construction, so
nothing else need require grad. Real; the package's Decent code calls `inverse` only through `FlowSequential.inverse`
(sampling), which is real by this file's convention when sampled with grad on. `MADE`, `MaskedLinear` and
`_create_masks` are compiled alone from the shipped file (nothing of the package imported)."""

import _shim  # noqa: F401
import linecache
import math

import torch
import torch.distributions as D
import torch.nn as nn
import torch.nn.functional as F
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("src/models/decent/flows/maf.py")
assert linecache.getline(PATH, 156).strip() == "x[:, i] = u[:, i] * torch.exp(loga[:, i]) + m[:, i]"


def run(control=False):
    replace = {156: "x = torch.cat([x[:, :i], (u[:, i] * torch.exp(loga[:, i]) + m[:, i]).unsqueeze(1), "
                    "x[:, i + 1:]], dim=1)"} if control else {}
    ns = compile_alone(PATH, {"MADE", "MaskedLinear", "_create_masks"},
                       {"torch": torch, "nn": nn, "F": F, "D": D, "math": math}, replace=replace)

    def go():
        torch.manual_seed(0)
        made = ns["MADE"](4, 8, 1)
        x, loga = made.inverse(torch.randn(3, 4))
        x.sum().backward()
    return go


FID = "src/models/decent/flows/maf.py:156:IPF104"
attempt(FID, "path", "MADE(4, 8, 1).inverse of a base sample with grad on, backward from the sample (to the MADE's "
        "weights): raises", run())
attempt(FID, "control", "the same with :156 out of place (torch.cat): runs", run(control=True))
