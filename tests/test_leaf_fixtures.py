"""The leaf-update fixtures (issue 13, item 4), run with real torch.

``fixtures/leaf_update/<case>.in.py`` is a program in the leaf-error family; its header says
what it does:

- ``# runtime: leaf-error``: ``example()`` raises "a leaf Variable that requires grad is being
  used in an in-place operation" (or its "view of a leaf" sibling). ``<case>.expected.py`` is
  the hand-written fix the future rule should produce (``with torch.no_grad():`` around the
  smallest run of statements or the loop); it runs, and its final state (outputs, parameters,
  gradients, buffers, optimizer state) equals the reference (bit for bit where the same kernels
  ran, else within a few ulps): the input run with
  every in-place call on a grad-requiring leaf executed under ``torch.no_grad()``.
  ``# fix: copy`` marks the "modify a copy" meaning (the leaf is read afterwards by the
  differentiated code): the expected fix clones, and differs from the no_grad meaning.
- ``# runtime: works``: the input runs; the rule must leave it alone (expected == input).
- ``# runtime: needs-copy``: the input runs, and a ``no_grad`` wrap of its updates would change
  it (a frozen weight updated from a differentiable value): the rule may not offer that wrap as safe.
"""

from __future__ import annotations

import pathlib

import pytest

torch = pytest.importorskip("torch")

from codemod.testing import FIXTURES, headers  # noqa: E402

from .final_state import InPlaceUnderNoGrad, differences, run_example, ulps_for  # noqa: E402

FOLDER = FIXTURES / "leaf_update"
CASES = sorted(FOLDER.glob("*.in.py"))
LEAF_ERROR = "leaf Variable that requires grad is being used in an in-place operation"


def case_id(path: pathlib.Path) -> str:
    return path.name[: -len(".in.py")]


def expected_of(path: pathlib.Path) -> pathlib.Path:
    return path.with_name(path.name.replace(".in.py", ".expected.py"))


def kind(path: pathlib.Path) -> str:
    return headers(path).get("runtime", "")


@pytest.mark.parametrize("path", CASES, ids=case_id)
def test_leaf_fixture(path):
    expected = expected_of(path)
    assert expected.exists(), f"{expected.name} is missing"
    assert headers(path).get("source", "").startswith("https://"), "every case names the report it comes from"
    if kind(path) == "leaf-error":
        with pytest.raises(RuntimeError, match=LEAF_ERROR):
            run_example(path)
        fixed = run_example(expected)
        reference = run_example(path, InPlaceUnderNoGrad())
        if headers(path).get("fix") == "copy":
            assert differences(fixed, reference), "the copy meaning should differ from the no_grad one"
        else:
            assert differences(fixed, reference, ulps_for(fixed, reference)) == {}
        return
    assert kind(path) in ("works", "needs-copy"), f"unknown header: {kind(path)!r}"
    assert expected.read_bytes() == path.read_bytes(), "the rule leaves this case alone"
    original = run_example(path)
    assert differences(run_example(path), original) == {}, "the program must agree with itself"
    wrapped = run_example(path, InPlaceUnderNoGrad(leaf_only=False))
    if kind(path) == "needs-copy":
        assert differences(original, wrapped), "a no_grad wrap was expected to change this program"
    else:
        assert differences(original, wrapped) == {}, "no_grad was expected to change nothing here"


class LeafUpdatesSkipped(InPlaceUnderNoGrad):
    """A wrong fix on purpose: the leaf updates do not happen at all (what a dead store gives)."""

    def update(self, func, args, kwargs):
        return args[0]


@pytest.mark.parametrize("name", ["weight_column_edit", "manual_sgd_add_alpha", "init_helper_outside_no_grad"])
def test_the_comparison_catches_a_fix_that_drops_the_update(name):
    """The reference really performs the updates, and the state comparison sees a fix that
    turns them into no-ops (``p = p.add(...)``)."""
    case = FOLDER / f"{name}.in.py"
    assert differences(run_example(case, InPlaceUnderNoGrad()), run_example(case, LeafUpdatesSkipped()))


def test_enough_cases_on_both_sides():
    kinds = [kind(p) for p in CASES]
    assert kinds.count("leaf-error") >= 12
    assert len(kinds) - kinds.count("leaf-error") >= 4
    assert "needs-copy" in kinds


def _tool_output(path: pathlib.Path, tier: str) -> pathlib.Path:
    """What ``fix`` (``safe``) or ``fix --unsafe-fixes`` (``unsafe``) makes of a case (the rule
    fixtures' expected files, checked byte for byte by tests/test_fixtures.py)."""
    safe = path.with_name(path.name.replace(".in.py", ".out.py"))
    unsafe = path.with_name(path.name.replace(".in.py", ".unsafe.out.py"))
    return unsafe if tier == "unsafe" and unsafe.exists() else safe


@pytest.mark.parametrize("path", CASES, ids=case_id)
def test_what_the_rule_writes_computes_the_no_grad_meaning(path):
    """IPF005's own rewrite, run: where a leaf-error case is rewritten, it runs and its final
    state equals the no_grad reference; a "works" or "needs-copy" case gets no safe rewrite
    that changes what it computes."""
    safe = _tool_output(path, "safe")
    if kind(path) == "leaf-error":
        if headers(path).get("fix") == "copy" or safe.read_bytes() == path.read_bytes():
            return  # the copy meaning is yours to write; see the next test for how many are fixed
        after, reference = run_example(safe), run_example(path, InPlaceUnderNoGrad())
        assert differences(after, reference, ulps_for(after, reference)) == {}
        return
    after, original = run_example(safe), run_example(path)
    assert differences(after, original, ulps_for(after, original)) == {}, "the safe tier changed a working program"


def test_the_safe_tier_fixes_most_of_the_leaf_family():
    fixed = [p for p in CASES if kind(p) == "leaf-error" and headers(p).get("fix") != "copy"
             and _tool_output(p, "safe").read_bytes() != p.read_bytes()]
    assert len(fixed) >= 8, [case_id(p) for p in fixed]


@pytest.mark.parametrize("path", [p for p in CASES if headers(p).get("fix") == "copy"], ids=case_id)
def test_the_copy_fix_computes_the_copy_meaning(path):
    """IPF005's unsafe "update a copy" fix runs, and leaves what the hand-written copy leaves
    (outputs, the leaf's values and its ``.grad``), bit for bit where the same kernels ran; the safe tier leaves it alone."""
    unsafe = _tool_output(path, "unsafe")
    assert unsafe.read_bytes() != path.read_bytes(), "the unsafe tier offers the copy"
    assert _tool_output(path, "safe").read_bytes() == path.read_bytes()
    after, expected = run_example(unsafe), run_example(expected_of(path))
    assert differences(after, expected, ulps_for(after, expected)) == {}


@pytest.mark.parametrize("path", [p for p in CASES if kind(p) == "leaf-error" and headers(p).get("fix") != "copy"],
                         ids=case_id)
def test_the_unsafe_tier_computes_the_no_grad_meaning_too(path):
    """``--unsafe-fixes`` adds the wraps of updates the analysis cannot prove need one
    (``dense.weight`` of an unnamed object): on these programs they too give the reference."""
    unsafe = _tool_output(path, "unsafe")
    if unsafe.read_bytes() == path.read_bytes():
        pytest.skip("the rule sees no update here (repair finds it: tests/test_leaf_repair.py)")
    after, reference = run_example(unsafe), run_example(path, InPlaceUnderNoGrad())
    assert differences(after, reference, ulps_for(after, reference)) == {}
