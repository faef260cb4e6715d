"""Family B (stB38): a tensor made with ``requires_grad=True`` as the start value of a buffer the
code fills in place (``table = torch.zeros(n, k, requires_grad=True)`` then ``table[i, j] = ...``
in loops), whose own gradient nothing can observe.

PyTorch refuses every write into such a leaf. The two meanings of the update ("update the leaf"
under ``no_grad``, "update a copy") differ in the leaf's own ``.grad`` and in whether the written
values stay differentiable. Where the leaf's gradient cannot be observed (its name is used only in
computations: indexed, an operand, a torch function's argument, a tensor method's receiver; never
returned, kept, handed to code of the project, to an optimizer or to ``torch.autograd``, nor its
``.grad`` read), the only difference left is the written values' gradients, which the copy keeps:
the fix clones the start value right where it is made (``table = table.clone()``), safe. Written
from the pattern (a table of terms filled in nested loops), run with torch: the original raises,
the fixed program's results equal those of the same program made without ``requires_grad``.
Negative controls: the leaf's gradient observed (``.grad`` read, returned, an optimizer over it,
``torch.autograd.grad`` asked for it, handed to a function of the file, kept in a list), the name
bound twice, or the leaf made under ``no_grad``: never the safe clone.
"""

from __future__ import annotations

import torch

from tests.test_fix24b_forward_inputs import HEADER, fixed, marks, run

TABLE = """\
def main():
    torch.manual_seed(0)
    coeffs = torch.randn(4, requires_grad=True)
    xs = torch.linspace(0.0, 1.0, 5)
    table = torch.zeros(5, 4, requires_grad=True)
    for i in range(5):
        for k in range(4):
            table[i, k] = coeffs[k] * xs[i] ** k
    out = table.sum(1)
    loss = (out ** 2).mean()
    loss.backward()
    return [coeffs.grad, out.detach()]
"""
WRITE_LINE = 8
CLONED = "    table = torch.zeros(5, 4, requires_grad=True)\n    table = table.clone()\n"


def _raises_leaf_error(source: str) -> bool:
    try:
        run(source)
    except RuntimeError as error:
        return "leaf Variable that requires grad" in str(error)
    return False


def _write_marks(body: str):
    return [m for m in marks(body) if m[1] == WRITE_LINE and m[0] == "IPF105"]


def test_a_start_value_whose_gradient_nobody_observes_is_cloned_where_it_is_made():
    assert _raises_leaf_error(HEADER + TABLE)
    found = _write_marks(TABLE)
    assert found and found[0][2] == "safe", marks(TABLE)
    result = fixed(TABLE)
    assert CLONED in result, result
    assert "with torch.no_grad()" not in result
    control = HEADER + TABLE.replace("torch.zeros(5, 4, requires_grad=True)", "torch.zeros(5, 4)")
    got, want = run(result), run(control)
    assert len(got) == len(want) == 2
    assert all(torch.allclose(g, w) for g, w in zip(got, want)), (got, want)
    assert got[0].abs().sum() > 0  # the written values' gradients reach `coeffs`


def test_the_clone_is_shared_by_every_write_into_the_start_value():
    body = TABLE.replace("    out = table.sum(1)\n", "    table[0] *= 2.0\n    out = table.sum(1)\n")
    result = fixed(body)
    assert result.count("table = table.clone()") == 1, result
    control = HEADER + body.replace("torch.zeros(5, 4, requires_grad=True)", "torch.zeros(5, 4)")
    assert all(torch.allclose(g, w) for g, w in zip(run(result), run(control)))


OBSERVED = {
    "grad-read": TABLE.replace("return [coeffs.grad, out.detach()]", "return [coeffs.grad, table.grad]"),
    "returned": TABLE.replace("return [coeffs.grad, out.detach()]", "return [coeffs.grad, table]"),
    "optimizer": TABLE.replace("    out = table.sum(1)\n",
                               "    opt = torch.optim.SGD([table], lr=0.1)\n    out = table.sum(1)\n"),
    "autograd-grad": TABLE.replace("    loss.backward()\n",
                                   "    (g,) = torch.autograd.grad(loss, table, retain_graph=True)\n"
                                   "    loss.backward()\n"),
    "handed-to-the-file": "def keep(t):\n    return t\n\n\n" + TABLE.replace(
        "    out = table.sum(1)\n", "    kept = keep(table)\n    out = table.sum(1)\n"),
    "kept-in-a-list": TABLE.replace("    out = table.sum(1)\n", "    held = [table]\n    out = table.sum(1)\n"),
    "hook": TABLE.replace("    out = table.sum(1)\n",
                          "    table.register_hook(print)\n    out = table.sum(1)\n"),
    # a read that autograd saves (`table[i - 1, k] * ...`) before a later write: the clone would be
    # modified after being saved (family A at backward) instead of refused at once
    "saved-before-a-write": TABLE.replace("table[i, k] = coeffs[k] * xs[i] ** k",
                                          "table[i, k] = table[i - 1, k] * coeffs[k] + xs[i]"),
    "bound-twice": TABLE.replace("    xs = torch.linspace",
                                 "    table = torch.ones(5, 4, requires_grad=True)\n    xs = torch.linspace"),
    "made-without-grad": TABLE.replace(
        "    table = torch.zeros(5, 4, requires_grad=True)\n",
        "    with torch.no_grad():\n        table = torch.zeros(5, 4, requires_grad=True)\n"),
}


def test_a_start_value_whose_gradient_may_be_observed_is_never_the_safe_clone():
    for name, body in OBSERVED.items():
        line = WRITE_LINE + body[:body.index("    for i in range(5)")].count("\n") - 5
        found = [m for m in marks(body) if m[1] == line and m[0] == "IPF105"]
        assert found and all(m[2] != "safe" for m in found), (name, marks(body))
        assert "table = table.clone()" not in fixed(body), name
