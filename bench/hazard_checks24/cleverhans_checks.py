"""cleverhans 4.0.0 (cleverhans/torch/utils.py:38 `clip_eta`, cleverhans/torch/attacks/spsa.py:183
`_project_perturbation`): the proven findings of `inplacefix check` (stop 58, fresh58, end of stop).
- utils.py:38: with norm=2, `torch.sum(eta ** 2, ...)` (:31) saves eta and `eta *= factor` (:38) writes it: with an
  eta that requires grad, backward raises. The check names `torch.abs` at :27 as the saver, which sits after the
  `raise NotImplementedError` of the norm=1 arm and never runs: real for another saver (the pow of :31).
- spsa.py:183: with norm=inf, `clip_eta` returns `torch.clamp(eta, -eps, eps)`, which saves the perturbation, and
  `perturbation.add_(...)` (:183) writes it: with a perturbation that requires grad, backward raises.
Both raise only with inputs that require grad, which cleverhans' own attacks do not hand them (SPSA's perturbation is
a plain tensor whose .grad SPSA sets): real by this file's convention (a perturbation or eta that requires grad, as
differentiable attacks have). Out of place, each runs. The functions are compiled alone from the shipped files."""

import _shim  # noqa: F401
import linecache

import numpy as np
import torch
from _check import attempt
from _fresh53 import compile_alone, src

UTILS = src("cleverhans/torch/utils.py")
SPSA = src("cleverhans/torch/attacks/spsa.py")
assert linecache.getline(UTILS, 38).strip() == "eta *= factor"
assert linecache.getline(SPSA, 183).strip() == "perturbation.add_((new_image - input_image) - perturbation)"


def run_clip(shipped):
    ns = compile_alone(UTILS, {"clip_eta"}, {"torch": torch, "np": np},
                       replace={} if shipped else {38: "eta = eta * factor"})

    def go():
        z = torch.randn(3, 4, requires_grad=True)
        out = ns["clip_eta"](z * 2, 2, 0.5)
        out.sum().backward()
        assert z.grad is not None
    return go


def run_project(shipped):
    ns = compile_alone(UTILS, {"clip_eta"}, {"torch": torch, "np": np})
    compile_alone(SPSA, {"_project_perturbation"}, ns,
                  replace={} if shipped else {183: "perturbation = perturbation + ((new_image - input_image) - perturbation); return perturbation"})

    def go():
        z = torch.randn(1, 3, 4, 4, requires_grad=True)
        x = torch.rand(1, 3, 4, 4)
        pert = z * 0.1
        out = ns["_project_perturbation"](pert, np.inf, 0.05, x, 0.0, 1.0)
        out = pert if out is None else out
        (out ** 2).sum().backward()
        assert z.grad is not None
    return go


attempt("cleverhans/torch/utils.py:38:IPF101", "path", "clip_eta(eta, 2, 0.5), eta that requires grad: the pow of :31 "
        "saved eta, `eta *= factor` spoils it, backward raises", run_clip(True))
attempt("cleverhans/torch/utils.py:38:IPF101", "control", "eta = eta * factor: runs", run_clip(False))
attempt("cleverhans/torch/attacks/spsa.py:183:IPF103", "path", "_project_perturbation(perturbation, inf, 0.05, x, 0, 1), "
        "a perturbation that requires grad: clip_eta's clamp saved it, add_ spoils it, backward raises",
        run_project(True))
attempt("cleverhans/torch/attacks/spsa.py:183:IPF103", "control", "out of place (returned): runs", run_project(False))
