"""adv-lib 0.2.8 (`adv_lib.attacks`): the proven findings of `inplacefix check` (stop 53, fresh53b, end of stop).
Sources from $FRESH53_SITE (here /work/tmp/s53/fresh53b-pk/site-all: both batches) through `_fresh53.py`; nothing of adv_lib is
imported: each flagged function is compiled alone from the shipped file (ast, line numbers kept) with
`utils/losses.py`'s difference_of_logits compiled alone too, a tiny linear classifier as the model.

Real by this file's convention (the attacks call these helpers on `.data`, so never with grad; a tensor that
requires grad makes them raise):
- fast_minimum_norm.py:33, :34 `l2_projection_`: `δ.norm(...).clamp_()` writes norm's saved output, and `δ.mul_`
  writes the δ norm saved.
- primal_dual_gradient_descent.py:171 `l2_proximal_`: `norms.neg_()` writes norm's saved output; :185 `l23_proximal`:
  the chain writes what `sqrt_()` saved.
False (every use: the only backward is the attack's own `autograd.grad`, taken before the write, and what the
attack returns never reaches the saved node):
- fast_minimum_norm.py:186 `fmn`: `adv_found.logical_or_` after `torch.where(adv_found, ...)` (:199) saved it for ε,
  which only steers the next step through `.data`.
- primal_dual_gradient_descent.py:142 `pdgd`: `λ_ema.lerp_` after `λ_ema[:, 0] * l2` (:120) saved it; the loss's
  graph is consumed by `grad(L_r.sum(), r)` (:122) first.
- structured_adversarial_attack.py:217, :221, :285 `str_attack`: writes into `upper_bound`/`const` after
  `const * (...)` (:137, :255) saved const; `grad(loss.sum(), ...)` (:138, :256) consumed that graph first.
Each false one runs the whole attack as shipped on inputs that require grad and differentiates what it returns.
"""

import _shim  # noqa: F401
import linecache
import math
from functools import partial
from itertools import product

import numpy as np
import torch
import torch.nn.functional as F
from _check import attempt
from _fresh53 import compile_alone, src
from torch import Tensor, nn
from torch.autograd import grad

FMN, PDGD = src("adv_lib/attacks/fast_minimum_norm.py"), src("adv_lib/attacks/primal_dual_gradient_descent.py")
STR, LOSSES = src("adv_lib/attacks/structured_adversarial_attack.py"), src("adv_lib/utils/losses.py")
for path, line, text in (
        (FMN, 33, "l2_norms = δ.norm(p=2, dim=1, keepdim=True).clamp_(min=1e-12)"),
        (FMN, 34, "δ.mul_(ε.unsqueeze(1) / l2_norms).clamp_(max=1)"),
        (FMN, 186, "adv_found.logical_or_(is_adv)"),
        (PDGD, 142, "λ_ema.lerp_(λ.softmax(dim=1), weight=1 - dual_ema)"),
        (PDGD, 171, "return x.flatten(1).mul_((λ.flatten(1) / norms.neg_()).add_(1).clamp_(min=0)).view_as(x)"),
        (STR, 217, "upper_bound[adv_found] = torch.min(upper_bound[adv_found], const[adv_found])"),
        (STR, 221, "const[is_smaller] = (lower_bound[is_smaller] + upper_bound[is_smaller]) / 2"),
        (STR, 285, "const[is_smaller] = (lower_bound[is_smaller] + upper_bound[is_smaller]) / 2")):
    assert linecache.getline(path, line).strip() == text, (path, line)
assert linecache.getline(PDGD, 185).strip().startswith("z = x.abs().mul_(2).div_(b_sqrt).sub_(b).sqrt_()")

BASE = {"math": math, "partial": partial, "torch": torch, "Tensor": Tensor, "nn": nn, "grad": grad, "F": F,
        "np": np, "product": product, "Optional": None, "VisdomLogger": None}
BASE.update(compile_alone(LOSSES, {"difference_of_logits"}, {"torch": torch, "Tensor": Tensor, "Optional": None}))


def grad_tensor(*shape):
    return torch.rand(*shape, dtype=torch.float64, requires_grad=True) * 1.0  # requires grad, not a leaf


# ---- real by convention: the helpers on a tensor that requires grad
def l2_projection(replace):
    ns = compile_alone(FMN, {"l2_projection_"}, dict(BASE), replace=replace)
    return lambda: ns["l2_projection_"](grad_tensor(3, 2, 4), torch.full((3,), 0.1, dtype=torch.float64)).sum().backward()


OUT33 = "l2_norms = δ.norm(p=2, dim=1, keepdim=True).clamp(min=1e-12)"
OUT34 = "δ = δ.mul(ε.unsqueeze(1) / l2_norms).clamp(max=1)"
F33, F34 = "adv_lib/attacks/fast_minimum_norm.py:33:IPF103", "adv_lib/attacks/fast_minimum_norm.py:34:IPF103"
attempt(F33, "path", "l2_projection_ up to :33 (return l2_norms), δ requiring grad: raises",
        l2_projection({33: "l2_norms = δ.norm(p=2, dim=1, keepdim=True).clamp_(min=1e-12); return l2_norms"}))
attempt(F33, "control", "the same with :33 out of place: runs", l2_projection({33: OUT33 + "; return l2_norms"}))
attempt(F34, "path", ":33 out of place, :34 as shipped: raises", l2_projection({33: OUT33}))
attempt(F34, "control", ":33 and :34 out of place: runs", l2_projection({33: OUT33, 34: OUT34}))


def proximal(name, replace):
    ns = compile_alone(PDGD, {name}, dict(BASE), replace=replace)
    return lambda: ns[name](grad_tensor(3, 2, 4) - 0.5, torch.full((3, 1, 1), 0.01, dtype=torch.float64)).sum().backward()


F171, F185 = ("adv_lib/attacks/primal_dual_gradient_descent.py:171:IPF103",
              "adv_lib/attacks/primal_dual_gradient_descent.py:185:IPF103")
attempt(F171, "path", "l2_proximal_ with x requiring grad, :171's `x.flatten(1).mul_` made out of place, "
        "`norms.neg_()` as shipped: raises", proximal("l2_proximal_", {171: "return x.flatten(1).mul((λ.flatten(1) / "
                                                       "norms.neg_()).add_(1).clamp_(min=0)).view_as(x)"}))
attempt(F171, "control", "the same with `norms.neg()`: runs", proximal("l2_proximal_", {
    171: "return x.flatten(1).mul((λ.flatten(1) / norms.neg()).add_(1).clamp_(min=0)).view_as(x)"}))
attempt(F171, "context", "l2_proximal_ as shipped, x requiring grad: raises", proximal("l2_proximal_", {}))
attempt(F185, "path", "l23_proximal as shipped, x requiring grad: raises", proximal("l23_proximal", {}))
attempt(F185, "control", "the same with :185 out of place: runs", proximal("l23_proximal", {
    185: "z = x.abs().mul(2).div(b_sqrt).sub(b).sqrt().add(b_sqrt).pow(3).mul(1 / 8).copysign(x).nan_to_num(nan=0)"}))


# ---- false: the attacks as shipped, inputs requiring grad, backward from what they return
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lin = nn.Linear(16, 3)

    def forward(self, x):
        return self.lin(x.flatten(1).float())


def attack(path, name, **kw):
    ns = compile_alone(path, {name} | kw.pop("extra", set()), dict(BASE))

    def go():
        torch.manual_seed(1)
        inputs = torch.rand(4, 1, 4, 4, requires_grad=True)
        labels = torch.tensor([0, 1, 2, 0])
        out = ns[name](Model(), inputs * 1.0, labels, **kw)
        assert out.requires_grad
        out.sum().backward()
        assert inputs.grad is not None
    return go


FMN_HELPERS = {"l0_projection_", "l1_projection_", "l2_projection_", "linf_projection_", "l0_mid_points",
               "l1_mid_points", "l2_mid_points", "linf_mid_points"}
attempt("adv_lib/attacks/fast_minimum_norm.py:186:IPF103", "path", "fmn (norm 2, 20 steps) as shipped on inputs that "
        "require grad, backward from the returned best_adv: runs", attack(FMN, "fmn", norm=2, steps=20,
                                                                          extra=FMN_HELPERS))
attempt("adv_lib/attacks/primal_dual_gradient_descent.py:142:IPF103", "path", "pdgd (20 steps) as shipped on inputs "
        "that require grad, backward from the returned best_adv: runs", attack(PDGD, "pdgd", num_steps=20))
for line in (217, 221, 285):
    attempt(f"adv_lib/attacks/structured_adversarial_attack.py:{line}:IPF104", "path", "str_attack (initial_const 100, 2 binary search "
            "steps, 5 iterations, retrain on) as shipped on inputs that require grad, backward from the returned "
            "adversarials: runs", attack(STR, "str_attack", binary_search_steps=2, max_iterations=5, retrain=True,
                                                       initial_const=100.0))


# ---- fast_adaptive_boundary/projections.py: projection_l2 (:101, :107, :109) and projection_linf (:159, :162, :164)
PROJ = src("adv_lib/attacks/fast_adaptive_boundary/projections.py")
for line, text in ((82, "c3 = (d * w).sum(dim=1).add_(c) > 0"), (127, "b0 = (w * d).sum(1)"),
                   (101, "d[c4] = -alpha.unsqueeze(-1) * w[c4]"), (109, "return d.mul_(w_nonzero)"),
                   (159, "d[c_l] = (2 * a[c_l]).sub_(1).mul_(lmbd_opt)"), (164, "return d.mul_(w != 0)")):
    assert linecache.getline(PROJ, line).strip() == text, line


def projection(name, replace, grads="w", seed=0, extra=None):
    ns = compile_alone(PROJ, {name}, dict(BASE), replace=replace)

    def go():
        g = torch.Generator().manual_seed(seed)
        args = [torch.rand(16, 8, generator=g), torch.randn(16, 8, generator=g), torch.randn(16, generator=g)]
        for k in grads:  # which of points t, hyperplane normal w, offset b require grad
            i = "twb".index(k)
            args[i] = args[i].requires_grad_(True) * 1.0
        out = ns[name](*args)
        if extra:  # (d, b0): backward from both
            out = out[0].sum() + out[1].sum()
        out.sum().backward()
    return go


for line in (101, 107, 109):
    attempt(f"adv_lib/attacks/fast_adaptive_boundary/projections.py:{line}:IPF10{3 if line == 109 else 4}", "path",
            "projection_l2 as shipped, normal w and offset b requiring grad (seeds 0-2): runs. `d * w` (:82) saves d "
            "only for w's gradient, and its result feeds only `> 0` (c3, a bool): no backward reaches that node",
            lambda: [projection("projection_l2", {}, "wb", s)() for s in range(3)])
DATA = {159: "d.data[c_l] = (2 * a[c_l]).sub_(1).mul_(lmbd_opt)",
        162: "d.data[c2] = torch.minimum(lmbd_opt, d[c2]).mul_(a[c2]).add_(torch.maximum(-lmbd_opt, d[c2])"
             ".mul_(1 - a[c2]))"}
for line in (159, 162):
    fid = f"adv_lib/attacks/fast_adaptive_boundary/projections.py:{line}:IPF104"
    other = {k: v for k, v in DATA.items() if k != line}
    attempt(fid, "path", f"projection_linf, normal w requiring grad, :{line} as shipped, the other write into d "
            "through .data (values kept, no version bump), :164 out of place handing back b0 too (`return d.mul(w != 0), "
            "b0`), backward from both: raises (`w * d` at :127 saved d)",
            projection("projection_linf", {**other, 164: "return d.mul(w != 0), b0"}, extra=True))
    attempt(fid, "control", "the same with both writes through .data: runs",
            projection("projection_linf", {**DATA, 164: "return d.mul(w != 0), b0"}, extra=True))
F164 = "adv_lib/attacks/fast_adaptive_boundary/projections.py:164:IPF103"
attempt(F164, "path", "projection_linf, w requiring grad, :159 and :162 through .data, :164 as shipped but handing "
        "back b0 too (`return d.mul_(w != 0), b0`), backward from both: raises",
        projection("projection_linf", {**DATA, 164: "return d.mul_(w != 0), b0"}, extra=True))
attempt(F164, "control", "the same with `d.mul(w != 0)`: runs",
        projection("projection_linf", {**DATA, 164: "return d.mul(w != 0), b0"}, extra=True))
attempt(F164, "context", "projection_linf as shipped, w requiring grad: raises", projection("projection_linf", {}))

# ---- fast_adaptive_boundary.py:194 `_fab`: `d3.flatten(1).norm(...).clamp_()` writes norm's saved output
FAB, AU = src("adv_lib/attacks/fast_adaptive_boundary/fast_adaptive_boundary.py"), src("adv_lib/utils/attack_utils.py")
assert linecache.getline(FAB, 194).strip() == "a0 = batch_view(d3.flatten(1).norm(p=norm, dim=1).clamp_(min=1e-8))"
assert linecache.getline(FAB, 197).strip() == "α = a1.div_(a2.add_(a1)).clamp_(min=0, max=α_max)"
OUT197 = "α = a1.div(a2.add(a1)).clamp(min=0, max=α_max)"  # `a2.add_` writes a view that chunk returned: forward error
OUT62 = "w = w * ind2.unsqueeze(1)"  # projection_l2's `w.mul_` writes the w that `w * t` (:60) saved (a miss)


def fab(replace_fab, replace_proj):
    ns = dict(BASE, warnings=__import__("warnings"), Tuple=None)
    compile_alone(PROJ, {"projection_l1", "projection_l2", "projection_linf"}, ns, replace=replace_proj)
    compile_alone(AU, {"get_all_targets"}, ns)
    compile_alone(FAB, {"_fab", "get_best_diff_logits_grads"}, ns, replace=replace_fab)

    def go():
        torch.manual_seed(1)
        inputs = torch.rand(4, 1, 4, 4, requires_grad=True)
        best_adv, found, _ = ns["_fab"](Model(), inputs * 1.0, torch.tensor([0, 1, 2, 0]), 2, n_iter=10)
        assert found.all()
        best_adv.sum().backward()
    return go


F194 = "adv_lib/attacks/fast_adaptive_boundary/fast_adaptive_boundary.py:194:IPF103"
attempt(F194, "path", "_fab (norm 2, 10 iterations) on inputs that require grad, with :197 and projection_l2's :62 "
        "out of place, :194 as shipped: raises", fab({197: OUT197}, {62: OUT62}))
attempt(F194, "control", "the same with :194 out of place: runs",
        fab({197: OUT197, 194: "a0 = batch_view(d3.flatten(1).norm(p=norm, dim=1).clamp(min=1e-8))"}, {62: OUT62}))
attempt(F194, "context", "_fab as shipped on inputs that require grad: :197 fails first, in the forward (view)",
        fab({}, {}))
