"""Issue 24 (default `fix`, kept55): a tuple an assignment unpacks at the top of a loop's turn
binds its names every turn (gpytorch's `_symeig`, realworld set4/416).

``evals_, evecs_ = torch.linalg.eigh(t)`` then ``evals_.clamp_min_(0.0)`` then ``evals_ =
evals_.type(dtype)`` in a loop: the write sees this turn's eigenvalues, never the last turn's
``evals_.type(...)``. The reaching bindings counted that later binding past the unpacking (only a
plain ``x = ...`` cut it), so the safe tier asked whether ``evals_.type(...)`` (a method of a value
of unknown kind) keeps its result, and refused the fix (``held-elsewhere``). Where the unpacking
may be skipped on a turn (inside an ``if``), the last turn's binding still reaches: unsafe.
"""

from __future__ import annotations

import torch

from codemod.config import Settings
from tests.programs import fixed_source, process_in_project, run_program

SYMEIG = """\
import torch


def chop(factors):
    evals = []
    for t in factors:
        dtype = t.dtype
        UNPACK
        evals_.clamp_min_(0.0)
        evals_ = evals_.type(dtype)
        evals.append(evals_ * evecs_.sum())
    return evals


def main():
    torch.manual_seed(0)
    a = torch.randn(3, 3, requires_grad=True)
    factors = [a @ a.t() - 0.5, a.t() @ a]
    sum(e.sum() for e in chop(factors)).backward()
    return [a.grad]
"""
WRITE = "        evals_.clamp_min_(0.0)"
REWRITTEN = "        evals_ = evals_.clamp_min(0.0)"


def _verdicts(source: str) -> list:
    line = source.splitlines().index(WRITE) + 1
    return [(f.status.value if f.status else None, f.reason)
            for f in process_in_project(source, Settings()).findings if f.span.line == line]


def test_an_unpacking_at_the_top_of_each_turn_hides_the_last_turns_binding():
    source = SYMEIG.replace("UNPACK", "evals_, evecs_ = torch.linalg.eigh(t.double())")
    assert _verdicts(source) == [("safe", None)], _verdicts(source)
    fixed = fixed_source(source, project=True)
    assert REWRITTEN in fixed
    got, want = run_program(fixed), run_program(source.replace(WRITE, REWRITTEN))
    assert all(torch.equal(g, w) for g, w in zip(got, want))


def test_an_unpacking_a_turn_may_skip_leaves_the_last_turns_binding():
    source = SYMEIG.replace("UNPACK", "if t.shape[0] > 2:\n            evals_, evecs_ = torch.linalg.eigh(t.double())")
    verdicts = _verdicts(source)
    assert verdicts and all(status == "unsafe" for status, _ in verdicts), verdicts
