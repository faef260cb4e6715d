"""muonium 0.2.0 (muonium/orthogonalize/newton_schulz.py:97 `ns_loop_triton`): the proven finding of `inplacefix
check` (stop 55, fresh55, end of stop). The Triton Newton-Schulz loop reuses two buffers: `gram_(A, B)` fills B by
a Triton kernel (no autograd, no version bump), `B.mul_(c).add_(A, alpha=b)` then writes B in place, and
`B @ X` (:102) saves B for the gradient of X. On the second pass :97 writes the B that the first pass's matmul
saved, so an X that requires grad makes backward raise. Muon orthogonalises gradients (no grad): real by this file's
convention (an input that requires grad, as the optimiser helpers before). `ns_loop_triton` is compiled alone from
the shipped file with `@torch.compile` as the identity (eager) and a stand-in `gram_` that writes `d_out` through
`.data` (as the Triton kernel: no autograd, no version bump; it asserts CUDA in the library), two steps."""

import _shim  # noqa: F401
import linecache
import types

import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("muonium/orthogonalize/newton_schulz.py")
assert linecache.getline(PATH, 97).strip() == "B.mul_(c).add_(A, alpha=b)"
assert linecache.getline(PATH, 102).strip() == "BX = (X.mT @ B).mT if transpose else B @ X"


def gram_(d_in, d_out):
    x = d_in.detach()
    d_out.data.copy_(x @ x.mT)


def run(control=False, steps=2):
    eager = types.ModuleType("torch")
    eager.__dict__.update(torch.__dict__)
    eager.compile = lambda *a, **k: (lambda f: f)
    replace = {97: "B = B.mul(c).add(A, alpha=b)"} if control else {}
    ns = compile_alone(PATH, {"ns_loop_triton"}, {"torch": eager, "Tensor": torch.Tensor, "gram_": gram_},
                       replace=replace)

    def go():
        X = torch.randn(3, 4, 6, requires_grad=True)
        ns["ns_loop_triton"](X, steps).sum().backward()
        assert X.grad is not None
    return go


FID = "muonium/orthogonalize/newton_schulz.py:97:IPF103"
attempt(FID, "path", "ns_loop_triton(X, 2) on a batch of 4x6 matrices that requires grad, backward: raises", run())
attempt(FID, "control", "the same with :97 out of place (B rebound): runs", run(control=True))
attempt(FID, "context", "one step (no second write of a saved B): runs", run(steps=1))
