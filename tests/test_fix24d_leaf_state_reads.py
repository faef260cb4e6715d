"""Issue 24 (default `fix`, fix24d): a leaf made with `requires_grad=True`, updated in place with
grad on (PyTorch refuses it), whose later reads only look at its state: its `.grad`, its values
through `.detach()`/`.data`, its shape.

IPF105 reads a leaf "read again after the update by the computation that is differentiated" as
"update a copy" (`leaf-read-after`, unsafe). Reads that autograd does not differentiate through
say no such thing: the values seen through `.detach()` are the same under both meanings, and the
copy has no `.grad` of its own (`coef2.grad.zero_()` would fail), so the update means the leaf's
(a manual step): the `no_grad` wrap, safe as for any leaf known to require grad (the original
cannot run). Written from the pattern (a manual gradient step), run with torch: the original
raises, the wrap's results equal a `no_grad` control. Negative control: a later differentiated
read keeps the copy meaning (unsafe), untouched by default `fix`.
"""

from __future__ import annotations

import torch

from tests.test_fix24b_forward_inputs import HEADER, fixed, marks, run

STEP = """\
def main():
    torch.manual_seed(0)
    data = torch.randn(8, 3)
    target = torch.randn(8)
    coef = torch.randn(3).requires_grad_(True)
    loss = ((data @ coef - target) ** 2).mean()
    loss.backward()
    first = coef.grad.clone()
    coef -= 0.1 * coef.grad
    coef.grad.zero_()
    size = coef.shape[0]
    return [first, coef.detach() * size, coef.data, coef.grad]
"""
STEP_LINE = 9


def _raises_leaf_error(source: str) -> bool:
    try:
        run(source)
    except RuntimeError as error:
        return "leaf Variable that requires grad" in str(error)
    return False


def test_a_step_on_a_leaf_whose_later_reads_are_its_state_gets_the_no_grad_wrap():
    assert _raises_leaf_error(HEADER + STEP)
    found = [m for m in marks(STEP) if m[1] == STEP_LINE and m[0] == "IPF105"]
    assert found and found[0][2] == "safe", marks(STEP)
    result = fixed(STEP)
    assert "    with torch.no_grad():\n        coef -= 0.1 * coef.grad\n" in result
    control = HEADER + STEP.replace("    coef -= 0.1 * coef.grad\n",
                                    "    with torch.no_grad():\n        coef -= 0.1 * coef.grad\n")
    got, want = run(result), run(control)
    assert all(torch.equal(g, w) for g, w in zip(got, want))


STEP_THEN_LOSS = STEP.replace("""\
    size = coef.shape[0]
    return [first, coef.detach() * size, coef.data, coef.grad]
""", """\
    again = ((data @ coef - target) ** 2).mean()
    again.backward()
    return [first, coef.grad]
""")


def test_a_later_differentiated_read_keeps_the_copy_meaning():
    assert "again.backward()" in STEP_THEN_LOSS
    found = [m for m in marks(STEP_THEN_LOSS) if m[1] == STEP_LINE and m[0] == "IPF105"]
    assert found and all(m[2] != "safe" for m in found) and found[0][3] == "leaf-read-after", found
    assert fixed(STEP_THEN_LOSS) == HEADER + STEP_THEN_LOSS


# the leaf read again, after the update, by a function nested in the same one (a closure): that
# read is differentiated (`predict` feeds the loss), so the copy meaning stays open
STEP_CLOSURE = """\
def main():
    torch.manual_seed(0)
    data = torch.randn(8, 3)
    target = torch.randn(8)
    coef = torch.randn(3).requires_grad_(True)
    def predict(x): return x @ coef
    loss = ((predict(data) - target) ** 2).mean()
    loss.backward()
    coef -= 0.1 * coef.grad
    again = ((predict(data) - target) ** 2).mean()
    again.backward()
    return [coef.grad]
"""


def test_a_later_read_by_a_nested_function_keeps_the_copy_meaning():
    found = [m for m in marks(STEP_CLOSURE) if m[1] == STEP_LINE and m[0] == "IPF105"]
    assert found and all(m[2] != "safe" for m in found) and found[0][3] == "leaf-read-after", found
    assert fixed(STEP_CLOSURE) == HEADER + STEP_CLOSURE
