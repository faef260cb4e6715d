"""Fix safety checked by running (issue 13, item 5): working programs under
``fixtures/safe_fixes/`` are rewritten by today's ``fix --select ALL`` (safe tier) and
``--unsafe-fixes``, and before and after must leave the same outputs, gradients and final
state (parameters, buffers, mutated inputs, optimizer state): bit for bit where both ran the same
kernels, within a few ulps where the rewrite runs others (``final_state.ulps_for``).

Header lines of a case: ``# case:`` what it exercises; ``# expect: rewritten`` for the safe fix
kinds (the safe tier must change the file, or the comparison proves nothing);
``# breaks-safe: why`` / ``# breaks-unsafe: why`` where today's tool is known to change the
program: those are strict xfails, so a fix of the analysis turns them into failures until the
mark is removed.
"""

from __future__ import annotations

import functools
import pathlib

import pytest

torch = pytest.importorskip("torch")

from codemod.engine.pipeline import fix_source  # noqa: E402
from codemod.testing import FIXTURES, SAFE, UNSAFE, headers  # noqa: E402

from .final_state import differences, run_example, ulps_for  # noqa: E402

CASES = sorted((FIXTURES / "safe_fixes").glob("*.py"))
TIERS = {"safe": SAFE, "unsafe": UNSAFE}


def params():
    for path in CASES:
        for tier in TIERS:
            why = headers(path).get(f"breaks-{tier}")
            marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
            yield pytest.param(path, tier, marks=marks, id=f"{path.stem}-{tier}")


def rewritten(path: pathlib.Path, tier: str):
    result = fix_source(path.read_bytes(), str(path), TIERS[tier])
    assert result.error is None, result.error
    return result.fixed


@functools.lru_cache(maxsize=None)
def original_state(path: pathlib.Path):
    """The input's final state; run twice first, since a comparison with a program that
    disagrees with itself would mean nothing."""
    state = run_example(path)
    assert differences(run_example(path), state) == {}, "the program must agree with itself"
    return state


@pytest.mark.parametrize("path,tier", list(params()))
def test_rewrite_keeps_outputs_gradients_and_final_state(path, tier, tmp_path):
    original = original_state(path)
    fixed = rewritten(path, tier)
    if fixed is None:
        return
    after = tmp_path / path.name
    after.write_text(fixed, encoding="utf-8")
    state = run_example(after)
    assert differences(state, original, ulps_for(state, original)) == {}


@pytest.mark.parametrize("path", [p for p in CASES if headers(p).get("expect") == "rewritten"], ids=lambda p: p.stem)
def test_safe_fix_kinds_are_rewritten_by_the_safe_tier(path):
    assert rewritten(path, "safe") is not None


def test_both_sides_are_covered():
    kinds = [headers(p) for p in CASES]
    assert sum(h.get("expect") == "rewritten" for h in kinds) >= 5
    # The safe tier broke 6 of these programs before dead stores, contracts and grad mode across
    # calls (issue 13); none may break it again.
    assert not [p.stem for p, h in zip(CASES, kinds) if "breaks-safe" in h]
    assert all("case" in h for h in kinds)
