"""mdot-tnt 1.0.0 (mdot_tnt/rounding.py:27, :30, :34 `round_altschuler`, :79, :86 `rounded_cost_altschuler`): the
proven findings of `inplacefix check` (stop 56, fresh56, end of stop). `solve_OT(r, c, C)` returns the rounded cost,
or with return_plan=True the rounded plan; the plan `P = (u + v - gamma * C).exp()` (__init__.py:88) is exp's saved
output, and the rounding writes it in place (`P *= X...` :27, `P *= Y...` :30, `P += ...` :34); the cost path writes
`err_r /= err_r.norm(...)` (:79, what norm saved) and `cost += ...` (:86, exp's saved output). A cost matrix C that
requires grad (an OT loss differentiated through the solver), backward of the plan or of the cost: raises. Own use
(solve_OT's documented outputs, with a cost matrix that requires grad). Each line of the plan is isolated by making
the other two writes of P go through `.data` (the same tensor, no version bump; values kept), the control all three
so; the cost's two lines write two tensors, each isolated by the other made out of place, the control both. The
solver's duals u, v are detached (a stand-in around `mdot` in the package namespace, the envelope form of the OT
gradient): the truncated-Newton solver itself writes in place what its PCG products saved (truncated_newton.py:285
`(res * y)` then `res`/`y` updated in place; unflagged, a miss) and would raise behind the rounding. As shipped,
solve_OT's backward meets the rounding's write first (context rows). The package needs only torch and is imported
from the unpacked wheel; the two functions are rewritten with `_rewrite.rewritten` and put in place in the package
namespace."""

import _shim  # noqa: F401
import linecache
import os
import sys

import torch
from _check import attempt
from _fresh53 import ROOT
from _rewrite import replaced, rewritten

sys.path.insert(0, os.path.join(ROOT, "mdot_tnt"))
import mdot_tnt  # noqa: E402
import mdot_tnt.rounding as rounding  # noqa: E402

PATH = rounding.__file__
LINES = {27: "P *= X.unsqueeze(-1)", 30: "P *= Y.unsqueeze(-2)", 34: "P += (",
         79: "err_r /= err_r.norm(p=1, dim=-1, keepdim=True) + 1e-30",
         86: "cost += (err_r.unsqueeze(-2) @ C @ err_c.unsqueeze(-1)).sum(-1).sum(-1)"}
for n, text in LINES.items():
    assert linecache.getline(PATH, n).strip() == text, n
DATA = {27: ("P *= X.unsqueeze(-1)", "P.data *= X.unsqueeze(-1).detach()"),
        30: ("P *= Y.unsqueeze(-2)", "P.data *= Y.unsqueeze(-2).detach()"),
        34: ("P += (", "P.data += ("),
        # the cost's two writes hit two tensors, each written once: out of place (a .data write of :86 would
        # also cut err_r out of the graph)
        79: ("err_r /= err_r.norm(p=1, dim=-1, keepdim=True) + 1e-30",
             "err_r = err_r / (err_r.norm(p=1, dim=-1, keepdim=True) + 1e-30)"),
        86: ("cost += (err_r.unsqueeze(-2) @ C @ err_c.unsqueeze(-1)).sum(-1).sum(-1)",
             "cost = cost + (err_r.unsqueeze(-2) @ C @ err_c.unsqueeze(-1)).sum(-1).sum(-1)")}
# :34's right-hand side spans lines; through .data it must be detached as a whole
DATA34_END = ("/ (err_r.norm(p=1, dim=-1, keepdim=True) + 1e-30).unsqueeze(-1)\n    )",
              "/ (err_r.norm(p=1, dim=-1, keepdim=True) + 1e-30).unsqueeze(-1)\n    ).detach()")


def detached_mdot(*args, **kwargs):
    u, v, gamma, k_total, logs = ORIGINAL_MDOT(*args, **kwargs)
    return u.detach(), v.detach(), gamma, k_total, logs


ORIGINAL_MDOT = mdot_tnt.__dict__["mdot"]


def shipped_run(plan):
    def go():
        torch.manual_seed(0)
        C = torch.rand(4, 5, dtype=torch.float64, requires_grad=True)
        r = torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=torch.float64)
        c = torch.full((5,), 0.2, dtype=torch.float64)
        out = mdot_tnt.solve_OT(r, c, C, gamma_f=64.0, return_plan=plan)
        out.sum().backward()
    return go


def run(plan, shipped):
    lines = (27, 30, 34) if plan else (79, 86)
    edits = [DATA[n] for n in lines if n != shipped]
    if plan and shipped != 34:
        edits.append(DATA34_END)
    name = "round_altschuler" if plan else "rounded_cost_altschuler"
    fn = rewritten(getattr(rounding, name), edits)

    def go():
        torch.manual_seed(0)
        C = torch.rand(4, 5, dtype=torch.float64, requires_grad=True)
        r = torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=torch.float64)
        c = torch.full((5,), 0.2, dtype=torch.float64)
        with replaced(mdot_tnt, name, fn), replaced(mdot_tnt, "mdot", detached_mdot):
            out = mdot_tnt.solve_OT(r, c, C, gamma_f=64.0, return_plan=plan)
        (out * torch.arange(1.0, out.numel() + 1, dtype=torch.float64).reshape(out.shape)).sum().backward()
        assert C.grad is not None
    return go


attempt("mdot_tnt/rounding.py:27:IPF101", "context", "solve_OT(return_plan=True) as shipped, C that requires grad: "
        "raises (the rounding's write of exp's output is met first)", shipped_run(True))
attempt("mdot_tnt/rounding.py:86:IPF101", "context", "solve_OT (cost) as shipped, C that requires grad: raises "
        "(exp's output written by :86)", shipped_run(False))
for n in (27, 30, 34):
    FID = f"mdot_tnt/rounding.py:{n}:IPF101"
    attempt(FID, "path", f"solve_OT(return_plan=True) with a cost matrix that requires grad, :{n} as shipped, the "
            "other two writes of P through .data, backward of the plan: raises", run(True, n))
    attempt(FID, "control", "all three through .data: runs", run(True, None))
for n in (79, 86):
    FID = f"mdot_tnt/rounding.py:{n}:IPF101"
    attempt(FID, "path", f"solve_OT (rounded cost) with a cost matrix that requires grad, :{n} as shipped, the other "
            "write through .data, backward of the cost: raises", run(False, n))
    attempt(FID, "control", "both through .data: runs", run(False, None))
