"""caloutils 0.0.18 (caloutils/utils/scaling.py:26 `scale_b_to_a`): the proven finding of `inplacefix check` (stop 55,
fresh55, end of stop). `std += 1e-6` writes `std`, the output of `a.std()` (:17), which std saves for backward. But
the function opens with `assert not a.requires_grad`: `std` (and `mean`) come from `a` alone, so they carry no grad
whenever the write is reached, and no node saved them: false (requires-grad-guard, the `assert` form). `b` may
require grad; it reaches `std` only as a divisor. `scale_b_to_a` is compiled alone from the shipped file; a and b are
built so that `scale_b > 10` and the write runs. Context: with the assert dropped (as `python -O` would), a that
requires grad raises at :26."""

import _shim  # noqa: F401
import linecache

import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("caloutils/utils/scaling.py")
assert linecache.getline(PATH, 26).strip() == "std += 1e-6"
assert linecache.getline(PATH, 15).strip() == "assert not a.requires_grad"


def run(grad_a=False, drop_assert=False, control=False):
    replace = {}
    if drop_assert:
        replace[15] = "pass"
    if control:
        replace[26] = "std = std + 1e-6"
    ns = compile_alone(PATH, {"scale_b_to_a"}, {"torch": torch}, replace=replace)

    def go():
        a = torch.randn(50) * 1e-3
        b = (torch.randn(50) * 1e9).requires_grad_()
        if grad_a:
            a.requires_grad_()
        sb_scale = torch.log10((b - a.mean()).abs().mean()) - torch.log10(a.std())
        assert sb_scale > 10  # so :26 runs
        try:
            sa, sb = ns["scale_b_to_a"](a, b)
        except AssertionError:
            raise ValueError("assert not a.requires_grad") from None
        (sa.sum() + sb.sum()).backward()
        assert b.grad is not None
    return go


FID = "caloutils/utils/scaling.py:26:IPF101"
attempt(FID, "path", "scale_b_to_a(a, b), b that requires grad and spread so that scale_b > 10 (:26 runs), a "
        "without grad as asserted: runs", run())
attempt(FID, "context", "a that requires grad: the assert refuses it", run(grad_a=True), expected=(ValueError,))
attempt(FID, "context", "the assert dropped (python -O), a that requires grad: raises",
        run(grad_a=True, drop_assert=True))
attempt(FID, "context", "the same with :26 out of place: runs", run(grad_a=True, drop_assert=True, control=True))
