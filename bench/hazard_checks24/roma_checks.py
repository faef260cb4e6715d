"""roma 1.8.0: the one proven finding of `inplacefix check` on main 07e1e7b (stop 48, prec48):
`procrustes_naive` (mappings.py:612) writes `SVt[flip, -1, :] *= -1` where
`SVt = Vt.clone() if torch.is_grad_enabled() else Vt` (line 611) and `Vt` is output 2 of
`torch.linalg.svd` (line 604, saved for backward). With grad on the write goes into the clone; the
arm that is `Vt` itself runs only with grad off, where svd saved nothing. The path calls it with a
batch of matrices requiring grad (some with a negative determinant, so `flip` selects rows) and
force_rotation=True, and runs backward: no error. Context: the grad-off call (the alias arm) runs; line 611
rewritten to `SVt = Vt` (the alias taken with grad on): backward raises, so the write is reached
and only the clone keeps it off the saved tensor.
False (group grad-mode-arm, fixed on prec48)."""

import _shim  # noqa: F401

import torch
from _check import attempt, expect_line
from _rewrite import rewritten, replaced
from roma import mappings

function = mappings.procrustes_naive
expect_line(function, 611, "SVt = Vt.clone() if torch.is_grad_enabled() else Vt")
expect_line(function, 612, "SVt[flip, -1, :] *= -1")
FINDING = "roma/mappings.py:612:IPF104"


def matrices(requires_grad):
    torch.manual_seed(0)
    M = torch.randn(8, 3, 3)
    M[::2, 0] *= -1  # some with a negative determinant: flip selects rows
    return M.requires_grad_(requires_grad)


def run():
    M = matrices(True)
    R = mappings.procrustes_naive(M, force_rotation=True)
    assert torch.det(R).gt(0).all()
    R.sum().backward()
    assert torch.isfinite(M.grad).all()


def grad_off():
    with torch.no_grad():
        mappings.procrustes_naive(matrices(False), force_rotation=True)


attempt(FINDING, "path", "procrustes_naive(8 matrices requiring grad, force_rotation=True), backward", run)
attempt(FINDING, "context", "procrustes_naive under no_grad (the arm SVt = Vt)", grad_off)
with replaced(mappings, "procrustes_naive", rewritten(function, [
        ("SVt = Vt.clone() if torch.is_grad_enabled() else Vt", "SVt = Vt")])):
    attempt(FINDING, "context", "line 611 rewritten to SVt = Vt (the alias with grad on): raises", run)
