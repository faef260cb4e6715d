"""linear_operator 0.6.1 (gpytorch 1.15.2's linear algebra): the proven findings of `inplacefix check`
on main (c257e57: lanczos.py 98, 122, 125, 139, 141; linear_cg.py 180, 300) and rec24d (lanczos.py
98, 125). Each path runs the flagged line with grad on and inputs requiring grad, then backward.

linear_cg's lines cannot run that way: the function computes with `torch.mul(..., out=...)`, which
raises on arguments that require grad before any backward (rec24d leaves the parameters of such a
function out of its evidence of grad). lanczos_tridiag's raise at backward (real by the convention of
bench/hazard_checks: in the library it runs under custom Functions with grad off)."""

import _shim  # noqa: F401
import torch
from _check import attempt, expect_line, stop_after
from linear_operator.utils import lanczos
from linear_operator.utils.linear_cg import linear_cg
from _rewrite import rewritten

expect_line(lanczos.lanczos_tridiag, 98, "q_mat[1].copy_(r_vec.div_(beta_0.unsqueeze(dim_dimension)))")
expect_line(lanczos.lanczos_tridiag, 125, "beta_curr = r_vec_norm.squeeze_(dim_dimension)")
expect_line(linear_cg, 180, "rhs_norm = rhs_norm.masked_fill_(rhs_is_zero, 1)")


def tridiag(line):
    def run():
        torch.manual_seed(0)
        a = torch.randn(6, 6)
        a = a @ a.t() + 6 * torch.eye(6)
        init = torch.randn(6, 1, requires_grad=True) * 1.0
        loc = stop_after(lanczos.lanczos_tridiag, line, lambda: lanczos.lanczos_tridiag(
            lambda v: a @ v, max_iter=4, dtype=torch.float32, device=torch.device("cpu"), matrix_shape=(6, 6),
            init_vecs=init))
        (loc["r_vec"] if line == 98 else loc["beta_curr"]).sum().backward()
    return run


# Isolated (prec35): every earlier in-place write on the same backward made out of place, so that only
# the flagged write can raise; the control also makes the flagged write out of place.
LINE_89 = ("r_vec.sub_(alpha_0.unsqueeze(dim_dimension).mul(q_0_vec))",
           "r_vec = r_vec.sub(alpha_0.unsqueeze(dim_dimension).mul(q_0_vec))")
LINE_98 = ("q_mat[1].copy_(r_vec.div_(beta_0", "q_mat[1].copy_(r_vec := r_vec.div(beta_0")
LINE_122 = ("r_vec.div_(r_vec_norm)\n\n            # Get next beta value",
            "r_vec_in = r_vec; r_vec = r_vec.div(r_vec_norm)\n\n            # Get next beta value")
LINE_125 = ("beta_curr = r_vec_norm.squeeze_(dim_dimension)", "beta_curr = r_vec_norm.squeeze(dim_dimension)")


def tridiag_isolated(line, edits):
    function = rewritten(lanczos.lanczos_tridiag, edits)

    def run():
        torch.manual_seed(0)
        a = torch.randn(6, 6)
        a = a @ a.t() + 6 * torch.eye(6)
        init = torch.randn(6, 1, requires_grad=True) * 1.0
        loc = stop_after(function, line, lambda: function(
            lambda v: a @ v, max_iter=4, dtype=torch.float32, device=torch.device("cpu"), matrix_shape=(6, 6),
            init_vecs=init))
        if line == 98:  # the whole backward: line 89 (before it) no longer writes what line 86 saved
            loc["r_vec"].sum().backward()
        else:  # back to the input of line 121's norm only: the norm and line 122's div saved r_vec_norm
            torch.autograd.grad(loc["r_vec"].sum(), [loc["r_vec_in"]])
    return run


attempt("linear_operator/utils/lanczos.py:98:IPF103", "path",
        "isolated: line 89 made out of place, stopped after line 98, backward", tridiag_isolated(98, [LINE_89]))
attempt("linear_operator/utils/lanczos.py:98:IPF103", "control",
        "lines 89 and 98 made out of place, stopped after line 98, backward", tridiag_isolated(98, [LINE_89, LINE_98]))
attempt("linear_operator/utils/lanczos.py:125:IPF103", "path",
        "isolated: line 122 made out of place, stopped after line 125, grad back to line 121's input",
        tridiag_isolated(125, [LINE_122]))
attempt("linear_operator/utils/lanczos.py:125:IPF103", "control",
        "lines 122 and 125 made out of place, stopped after line 125, grad back to line 121's input",
        tridiag_isolated(125, [LINE_122, LINE_125]))


def cg():
    torch.manual_seed(0)
    a = torch.randn(5, 5)
    a = a @ a.t() + 5 * torch.eye(5)
    rhs = torch.randn(5, 2, requires_grad=True) * 1.0
    linear_cg(lambda v: a @ v, rhs, max_iter=3, max_tridiag_iter=0).sum().backward()


for line in (98, 125):
    attempt(f"linear_operator/utils/lanczos.py:{line}:IPF103", "path",
            f"lanczos_tridiag, init vectors require grad, stopped after line {line}, backward", tridiag(line))
for line in (180, 300):
    attempt(f"linear_operator/utils/linear_cg.py:{line}:IPF103", "path",
            "linear_cg, rhs requires grad, grad on: out= refuses it before backward", cg, expected=(RuntimeError,))
