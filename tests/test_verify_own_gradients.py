"""Gradients the program computes itself count as evidence, by provenance from the run (stop 38,
issue 23's follow-up to "a verdict names its evidence").

A program that differentiates itself with ``torch.autograd.functional`` (``jacobian``,
``hessian``, ``vjp``, ``jvp``, ``hvp``, ``vhp``) or nested ``torch.autograd.grad`` and returns
the result gives the harness's backward nothing to reach: every harness gradient is None on both
sides. What it returns is a gradient a rewrite could change: counted where the run shows it was
made from the program's own ``grad`` results by operations that only rearrange entries (stack,
view, detach), never by a name in the source.

Each program writes in place inside the differentiated function (``y.mul_(torch.tanh(x))``).
The right rewrite (out of place) is Verified; the wrong one (``torch.tanh(x).detach()``: the
same values, another Jacobian) is NOT verified. Controls: a function's values that ``vjp``
returns beside the gradient, and arithmetic on a gradient that need not change with it (its
sign), are not counted: a rewrite that keeps them alone is unproven. Real torch, new programs.
"""

from __future__ import annotations

import textwrap

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.verify import Verdict, render_table, verify  # noqa: E402

PROGRAM = '''\
    import torch


    def field(x):
        y = x * 1.5
        y.mul_(torch.tanh(x))
        return y


    def compute():
        torch.manual_seed(0)
        x = torch.rand(5)
        return {"result": RESULT}
'''

RIGHT = ("y = x * 1.5\n    y.mul_(torch.tanh(x))", "y = x * 1.5 * torch.tanh(x)")
WRONG = ("y = x * 1.5\n    y.mul_(torch.tanh(x))", "y = x * 1.5\n    y.mul_(torch.tanh(x).detach())")

OWN = {
    "jacobian": "torch.autograd.functional.jacobian(field, x)",
    "jacobian_vectorized": "torch.autograd.functional.jacobian(field, x, vectorize=True)",
    "hessian": "torch.autograd.functional.hessian(lambda t: field(t).sum(), x)",
    "vjp": "torch.autograd.functional.vjp(field, x, torch.ones(5))[1]",
    "jvp": "torch.autograd.functional.jvp(field, x, torch.ones(5))[1]",
    "hvp": "torch.autograd.functional.hvp(lambda t: field(t).sum(), x, torch.ones(5))[1]",
    "vhp": "torch.autograd.functional.vhp(lambda t: field(t).sum(), x, torch.ones(5))[1]",
    "nested_grad": ("torch.autograd.grad(torch.autograd.grad(field(x.requires_grad_()).sum(), x, "
                    "create_graph=True)[0].sum(), x)[0]"),
}

NOT_OWN = {
    "vjp_values": "torch.autograd.functional.vjp(field, x, torch.ones(5))[0]",
    "jacobian_sign": "torch.autograd.functional.jacobian(field, x).sign()",
}


def _program(result: str) -> str:
    return textwrap.dedent(PROGRAM.replace("RESULT", result))


def _verify(tmp_path, original: str, rewritten: str):
    path = tmp_path / "physics.py"
    path.write_text(original)
    return verify(f"{path}::compute", rewritten_source=rewritten, devices=["cpu"], timeout=240)


@pytest.mark.parametrize("how", sorted(OWN))
def test_a_gradient_the_program_computes_itself_is_evidence(tmp_path, how):
    original = _program(OWN[how])
    right = original.replace(*RIGHT)
    assert right != original
    result = _verify(tmp_path, original, right)
    report, shown = result.devices[0], render_table(result)
    assert report.compared.grads == report.compared.grads_none, shown  # the harness's reach no leaf
    assert report.compared.own_grads == len(report.compared.calls) > 0, shown
    assert report.verdict is Verdict.VERIFIED, shown


@pytest.mark.parametrize("how", sorted(OWN))
def test_a_wrong_rewrite_of_that_gradient_is_not_verified(tmp_path, how):
    original = _program(OWN[how])
    wrong = original.replace(*WRONG)
    assert wrong != original
    result = _verify(tmp_path, original, wrong)
    assert result.devices[0].verdict is Verdict.NOT_VERIFIED, render_table(result)


@pytest.mark.parametrize("how", sorted(NOT_OWN))
def test_values_beside_a_gradient_or_made_from_it_are_no_evidence(tmp_path, how):
    original = _program(NOT_OWN[how])
    result = _verify(tmp_path, original, original.replace(*WRONG))
    report, shown = result.devices[0], render_table(result)
    assert report.compared.own_grads == 0, shown
    assert report.verdict is Verdict.UNPROVEN, shown
    assert "no gradient reached any leaf on either side" in shown, shown


# Not counted yet (the cost, measured by these strict xfails): torch.func's reverse-mode transforms
# refuse the harness's saved-tensor hooks ("torch.func.{grad, vjp, jacrev, hessian} don't yet
# support saved tensor hooks"), so the original itself fails under the harness; forward-mode
# derivatives (``jacfwd``: dual tensors, no ``grad`` call) leave no ``grad`` result to follow.
NOT_YET = {
    "func_grad": "torch.func.grad(lambda t: field(t).sum())(x)",
    "func_jacfwd": "torch.func.jacfwd(field)(x)",
}


@pytest.mark.xfail(strict=True, reason="torch.func transforms and forward-mode derivatives are not counted as evidence")
@pytest.mark.parametrize("how", sorted(NOT_YET))
def test_torch_func_gradients_are_evidence(tmp_path, how):
    original = _program(NOT_YET[how])
    result = _verify(tmp_path, original, original.replace(*RIGHT))
    assert result.devices[0].verdict is Verdict.VERIFIED, render_table(result)


@pytest.mark.parametrize("how", sorted(NOT_YET))
def test_a_wrong_rewrite_under_torch_func_is_not_verified(tmp_path, how):
    original = _program(NOT_YET[how])
    result = _verify(tmp_path, original, original.replace(*WRONG))
    assert result.devices[0].verdict is not Verdict.VERIFIED, render_table(result)
