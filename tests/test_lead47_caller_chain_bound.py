"""A chain of helpers that each call the next from several sites (heavyball 3.2.1's fusions.py):
following a parameter's leaf up every call site of every caller cost the width to the power of
the depth (4 minutes for that 347-line file at stop 47). ``HandedLeaves.passed_leaf`` follows
at most ``_CALLER_DEPTH`` callers up; deeper, the parameter's origin is unknown (not proven).
The shallow chain stays proven (run with torch: it raises)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.analysis import leaves  # noqa: E402
from tests.programs import proven, raises_inplace  # noqa: E402


def _chain(depth: int, width: int) -> str:
    lines = ["import torch", "", "", "def h0(w):", "    w[0] = 1.0", ""]
    for i in range(1, depth + 1):
        lines += ["", f"def h{i}(w):"] + [f"    h{i - 1}(w)"] * width + [""]
    lines += ["", "def main():", "    p = torch.zeros(3, requires_grad=True)", f"    h{depth}(p)", ""]
    return "\n".join(lines)


def test_a_short_chain_of_helpers_is_still_followed():
    source = _chain(2, 2)
    assert raises_inplace(source, "main", message="a leaf Variable that requires grad")
    assert "IPF105" in [code for code, _ in proven(source)]


def test_a_deep_wide_chain_is_followed_a_bounded_number_of_levels(monkeypatch):
    calls = []
    original = leaves.HandedLeaves._passed_leaf

    def counted(self, func, param):
        calls.append(param)
        return original(self, func, param)

    monkeypatch.setattr(leaves.HandedLeaves, "_passed_leaf", counted)
    source = _chain(9, 4)
    assert raises_inplace(source, "main", message="a leaf Variable that requires grad")
    found = proven(source)  # the leaf is 9 helpers up: past the bound, not proven as a leaf write
    assert "IPF105" not in [code for code, _ in found]
    assert len(calls) <= 4 ** (leaves._CALLER_DEPTH + 1)  # unbounded: hundreds of thousands
