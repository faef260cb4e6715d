"""``repair`` on the leaf-error family (issue 13): every broken program of
``fixtures/leaf_update/`` is located, fixed with IPF005's ``no_grad`` wrap (at the call site of a
helper where the update runs inside one), and verified against the no-grad meaning (the original
run with its leaf updates done outside autograd), in fresh processes, with real torch.

``# fix: copy`` cases mean "update a copy": that meaning is not the no-grad one, so no rewrite
of them can be verified against it, and ``repair`` must not claim one.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.repair import render, repair  # noqa: E402
from codemod.runtime.verify import Verdict, render_table, verify  # noqa: E402
from codemod.testing import FIXTURES, headers  # noqa: E402

CASES = sorted((FIXTURES / "leaf_update").glob("*.in.py"))
BROKEN = [p for p in CASES if headers(p).get("runtime") == "leaf-error"]
# ``helper_given_embedding_weight`` (a frozen table that nothing differentiates) is verified again
# (stop 38): its None-vs-None gradients are at a leaf the program itself switched out of autograd,
# which the rewrite kept frozen (tests/test_verify_frozen_leaves.py).
NO_GRAD = [p for p in BROKEN if headers(p).get("fix") != "copy"]
COPY = [p for p in BROKEN if headers(p).get("fix") == "copy"]


def case_id(path) -> str:
    return path.name[: -len(".in.py")]


@pytest.mark.parametrize("path", NO_GRAD, ids=case_id)
def test_repair_verifies_every_leaf_error_case(path):
    result = repair(f"{path}::example")
    assert result.changed, render(result)
    assert result.verified, render(result) + "\n" + (render_table(result.verification) if result.verification else "")
    assert result.verification.verdict is Verdict.VERIFIED
    assert "no_grad()" in result.repaired


@pytest.mark.parametrize("path", COPY, ids=case_id)
def test_repair_claims_no_proof_for_the_copy_meaning(path):
    result = repair(f"{path}::example")
    assert not result.verified, render(result)


def test_the_family_is_covered():
    assert len(NO_GRAD) >= 12 and COPY


HELPER_THAT_ALSO_COMPUTES = '''import torch


def reset_and_scale(state, x):
    state.zero_()
    return x * 2


def example():
    mem = torch.ones(2, requires_grad=True)
    x = torch.ones(2, requires_grad=True)
    y = reset_and_scale(mem, x)
    loss = (y + 3 * mem).sum()
    loss.backward()
    return {"loss": loss, "mem": mem, "x": x}
'''


def test_a_wrap_that_cuts_a_gradient_is_not_verified_and_the_update_s_own_wrap_is(tmp_path):
    """Around the helper's call, a ``no_grad`` would also cut ``x * 2`` from the graph: the
    verification refuses it (x.grad differs from the no-grad meaning's). The wrap around the
    failing statement (the call gives ``state`` a leaf: IPF105 sees it) is verified and written."""
    path = tmp_path / "helper.py"
    path.write_text(HELPER_THAT_ALSO_COMPUTES)
    cut = HELPER_THAT_ALSO_COMPUTES.replace(
        "    y = reset_and_scale(mem, x)", "    with torch.no_grad():\n        y = reset_and_scale(mem, x)")
    assert verify(f"{path}::example", rewritten_source=cut).verdict is Verdict.NOT_VERIFIED
    result = repair(f"{path}::example")
    assert result.verified, render(result)
    assert "    with torch.no_grad():\n        state.zero_()" in result.repaired
    assert "    y = reset_and_scale(mem, x)" in result.repaired


GRADIENT_STEP_ON_A_FRESH_LEAF = '''
import torch


def fit():
    target = torch.tensor([1.0, -2.0, 3.0])
    x = torch.zeros(3, requires_grad=True)
    for _ in range(3):
        loss = ((x - target) ** 2).sum()
        loss.backward()
        x -= 0.1 * x.grad
        x.grad.zero_()
    return {"x": x.detach().clone()}
'''


def test_a_gradient_step_on_a_leaf_read_again_gets_the_no_grad_wrap(tmp_path):
    """A tensor made with requires_grad=True is read again after its update (IPF105 says
    "update a copy", with no fix in a loop), but the update reads its own ``.grad``: a gradient
    step, never meant to be differentiated. The wrap around it is offered first and verified;
    the copy (``x = x.clone()``) would lose ``x.grad``."""
    path = tmp_path / "descent.py"
    path.write_text(GRADIENT_STEP_ON_A_FRESH_LEAF)
    result = repair(f"{path}::fit")
    assert result.verified, render(result)
    assert "        with torch.no_grad():\n            x -= 0.1 * x.grad\n        x.grad.zero_()" in result.repaired


READ_BEFORE_THE_EDIT = '''
import torch


def tune():
    torch.manual_seed(0)
    lin = torch.nn.Linear(4, 1)
    x = torch.randn(8, 4)
    y = torch.randn(8, 1)
    before = lin(x)
    print(float((before - y).abs().mean()))
    lin.weight[0, 1] *= 0.5
    loss = ((lin(x) - y) ** 2).mean()
    loss.backward()
    return {"w": lin.weight.grad, "b": lin.bias.grad}


def tune_through():
    torch.manual_seed(0)
    lin = torch.nn.Linear(4, 1)
    x = torch.randn(8, 4)
    y = torch.randn(8, 1)
    before = lin(x)
    lin.weight[0, 1] *= 0.5
    loss = ((lin(x) - y) ** 2).mean() + before.mean()
    loss.backward()
    return {"w": lin.weight.grad, "b": lin.bias.grad}
'''


def test_a_weight_edit_after_a_forward_no_backward_goes_through_is_verified(tmp_path):
    """A forward run before the edit for a printed score (its result still bound) is read by
    no backward: the no-grad meaning fits and the wrap is verified. Where the loss adds that
    earlier result, the backward goes through the read before the edit: no meaning is known."""
    path = tmp_path / "edit.py"
    path.write_text(READ_BEFORE_THE_EDIT)
    wrapped = "    with torch.no_grad():\n        lin.weight[0, 1] *= 0.5\n"
    kept = verify(f"{path}::tune", rewritten_source=READ_BEFORE_THE_EDIT.replace("    lin.weight[0, 1] *= 0.5\n", wrapped, 1))
    assert kept.verdict is Verdict.VERIFIED, render_table(kept)
    text = READ_BEFORE_THE_EDIT.replace("    lin.weight[0, 1] *= 0.5\n    loss = ((lin(x) - y) ** 2).mean() + before",
                                        wrapped + "    loss = ((lin(x) - y) ** 2).mean() + before")
    through = verify(f"{path}::tune_through", rewritten_source=text)
    assert through.verdict is not Verdict.VERIFIED, render_table(through)
    assert "goes through that read" in render_table(through)
