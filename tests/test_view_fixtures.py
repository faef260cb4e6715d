"""The view-write fixtures (issue 17), run with real torch.

``fixtures/view_write/<case>.in.py`` opens with ``# runtime:``:

- ``view-error``: ``example()`` raises one of the view errors ("... is a view and is being
  modified inplace ...", "... created in no_grad mode ..."). The rewrite (``.out.py``; with
  ``# fix: unsafe`` the ``.unsafe.out.py``) runs, and its final state (outputs, parameters,
  gradients) equals the reference (bit for bit where both ran the same kernels, within a few
  ulps where the rewrite runs others: ``final_state.ulps_for``): the input run with every view PyTorch refuses
  replaced by a copy of itself (``runtime/view_copies.py``); where the tensor viewed is read
  after the write, the input run with views allowed (its writes reach the tensor viewed; views
  made under no_grad are detached). ``# fix: none``: no rewrite is offered; the case still shows
  the error.
- ``works``: the input runs; whatever the rules make of it keeps its final state.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.config import Settings  # noqa: E402
from codemod.engine.pipeline import check_source  # noqa: E402
from codemod.runtime.harness import inplace_error_kind  # noqa: E402
from codemod.runtime.view_copies import ViewsAllowed, WritesIntoCopies  # noqa: E402
from codemod.testing import FIXTURES, headers  # noqa: E402

from .final_state import differences, run_example, ulps_for  # noqa: E402

FOLDER = FIXTURES / "view_write"
CASES = sorted(FOLDER.glob("*.in.py"))
BROKEN = [p for p in CASES if headers(p).get("runtime") == "view-error"]


def case_id(path) -> str:
    return path.name[: -len(".in.py")]


def output_of(path, suffix: str):
    return path.with_name(path.name.replace(".in.py", suffix))


@pytest.mark.parametrize("path", CASES, ids=case_id)
def test_view_fixture(path):
    h = headers(path)
    kind, fix = h.get("runtime"), h.get("fix", "safe")
    fixed = output_of(path, ".unsafe.out.py" if fix == "unsafe" else ".out.py")
    if kind == "works":
        original, after = run_example(path), run_example(fixed)
        assert differences(after, original, ulps_for(after, original)) == {}, "the rewrite changed a working program"
        return
    assert kind == "view-error", f"unknown header: {kind!r}"
    with pytest.raises(RuntimeError) as raised:
        run_example(path)
    assert inplace_error_kind("RuntimeError", str(raised.value)) == "view", str(raised.value)
    reference_mode = WritesIntoCopies()
    reference = run_example(path, reference_mode)
    assert reference_mode.copies > 0
    if reference_mode.unfit is not None:  # the tensor viewed is read after: the writes reach it
        reference = run_example(path, ViewsAllowed())
    if fix == "none":
        assert fixed.read_bytes() == path.read_bytes(), "no rewrite is offered for this case"
        return
    assert fixed.read_bytes() != path.read_bytes(), "the case is rewritten"
    after = run_example(fixed)
    assert differences(after, reference, ulps_for(after, reference)) == {}, "the rewrite differs from the reference"
    if fix == "unsafe":  # the safe run leaves it: the tensor viewed is read after the write
        assert output_of(path, ".out.py").read_bytes() == path.read_bytes()


def test_both_sides_and_every_error_are_represented():
    kinds = [headers(p).get("runtime") for p in CASES]
    assert kinds.count("view-error") >= 12 and kinds.count("works") >= 12
    messages = set()
    for path in CASES:
        if headers(path).get("runtime") == "view-error":
            try:
                run_example(path)
            except RuntimeError as exc:
                text = str(exc)
                messages.add("no_grad" if "no_grad mode" in text else
                              "custom" if "custom Function" in text else "multiple")
    assert messages == {"no_grad", "custom", "multiple"}


def default_findings(path):
    """What plain ``inplacefix check`` reports (the default selection: IPF1xx only)."""
    return check_source(path.read_bytes(), str(path), Settings()).findings


@pytest.mark.parametrize("path", BROKEN, ids=case_id)
def test_check_flags_every_broken_case_by_default(path):
    """Every case that raises is a proven error (IPF106), not only a possible one (IPF006):
    PyTorch always raises there. tests/test_view_repair.py checks that the line is the one the
    run names as the write."""
    codes = [f.code for f in default_findings(path)]
    assert "IPF106" in codes, codes


@pytest.mark.parametrize("path", [p for p in CASES if headers(p).get("runtime") == "works"], ids=case_id)
def test_check_is_quiet_by_default_where_pytorch_allows_the_write(path):
    assert [f for f in default_findings(path) if f.code == "IPF106"] == []


def test_views_allowed_leaves_a_custom_functions_views_alone():
    """A Function's ``forward`` runs with grad off, so the views it makes are no-grad views; they
    are the Function's output, not views the program took under ``no_grad``: not detached."""
    allowed = ViewsAllowed()
    with pytest.raises(RuntimeError, match="custom Function"):
        run_example(FOLDER / "custom_function_view.in.py", allowed)
    assert allowed.replaced == []
    detached = ViewsAllowed()
    run_example(FOLDER / "no_grad_views_overlap.in.py", detached)
    assert [where.split(" ", 1)[0] for where in detached.replaced] == [
        "no_grad_views_overlap.in.py:14", "no_grad_views_overlap.in.py:15"]
