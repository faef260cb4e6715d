"""Leaf updates meant under ``no_grad``, offered from the run (issue 23, "Meaning from the program").

The static rule IPF105 says "update a copy" for a tensor made with ``requires_grad=True`` and read
again after its update (``leaf-read-after``), and offers no ``no_grad`` wrap there. The run knows
more: the tensor is a leaf, and whether the value written carries a gradient from another leaf.
Where it does not, and the update changes the leaf's own values (``w[3] *= 1.5``, a nudge of a
state the program already used), or the leaf is a module's parameter, repair offers the wrap
after the copies, and the verification decides it against the no-grad meaning.

Negative controls: an overwrite of part of a fresh plain leaf (``c.index_copy_(...)``, the
"fixed entries" reading: two public threads fix it with a clone) gets no wrap; a value carrying
another leaf's gradient into a plain leaf (a leaf loss summed from terms) gets no wrap; a step of
the computation on a leaf whose ``.grad`` the program reads (``x.exp_()``) is not verified.
Real torch, new programs written from the reports' patterns.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import repair_program  # noqa: E402


_repair = repair_program


NUDGE = '''\
    import torch


    def compute():
        torch.manual_seed(0)
        x = torch.rand(16, 10)
        y = torch.randint(0, 2, (16, 1)).float()
        w = torch.randn(10, 1).requires_grad_()
        b = torch.zeros(1, requires_grad=True)

        def model(inp):
            return inp @ w + b

        acc = ((model(x) > 0).float() == y).float().mean().item()
        w[3] *= 1.5
        acc2 = ((model(x) > 0).float() == y).float().mean().item()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(model(x), y)
        loss.backward()
        return {"w": w.grad, "b": b.grad, "acc": torch.tensor([acc, acc2])}
'''


def test_a_leaf_row_scaled_by_a_constant_gets_the_no_grad_wrap_from_the_run(tmp_path):
    """IPF105 says "update a copy" (the leaf is read again); the copy loses ``w.grad``. The run
    saw a value that carries no gradient, scaling the leaf's own row: the wrap is offered after
    the copies and verified against the no-grad meaning."""
    result, shown = _repair(tmp_path, "nudge", NUDGE)
    assert result.verified, shown
    assert "    with torch.no_grad():\n        w[3] *= 1.5\n" in result.repaired, shown
    assert "clone" not in result.repaired


COLUMNS = '''\
    import torch
    import torch.nn as nn


    def make(width):
        return nn.ModuleList([nn.Linear(6, width), nn.Linear(width, 3)])


    def compute():
        torch.manual_seed(0)
        layers = make(8)
        x = torch.randn(5, 6)
        target = torch.randint(0, 3, (5,))
        shift = [torch.linspace(-0.5, 0.5, 8), torch.linspace(0.1, 0.3, 3)]
        for i, (k, col) in enumerate([(0, 1), (1, 4), (1, 6)]):
            layers[k].weight[:, col] -= shift[k] * (i + 1)
            layers[k].weight[:, col] += shift[k] * 0.5
        out = layers[1](torch.tanh(layers[0](x)))
        loss = nn.functional.cross_entropy(out, target)
        loss.backward()
        return {name: p.grad for name, p in layers.named_parameters()}
'''


def test_a_parameter_column_edit_in_a_loop_is_one_no_grad_block(tmp_path):
    """Two writes into a module's parameter per iteration: each round finds the next one; the
    second joins the ``no_grad`` block the first got (one block holding the writes, not two)."""
    result, shown = _repair(tmp_path, "columns", COLUMNS)
    assert result.verified, shown
    assert result.repaired.count("no_grad") == 1, shown
    assert ("        with torch.no_grad():\n"
            "            layers[k].weight[:, col] -= shift[k] * (i + 1)\n"
            "            layers[k].weight[:, col] += shift[k] * 0.5\n") in result.repaired, shown


ROWS = '''\
    import torch
    import torch.nn as nn


    def compute():
        torch.manual_seed(0)
        emb = nn.Embedding(12, 4)
        tokens = torch.randint(0, 12, (2, 6))
        print(emb(tokens).norm().item())
        pretrained = torch.randn(3, 4)
        emb.weight.index_copy_(0, torch.tensor([1, 5, 7]), pretrained)
        loss = emb(tokens).pow(2).mean()
        loss.backward()
        return {"emb": emb.weight.grad}
'''


def test_rows_copied_into_a_parameter_with_index_copy_are_wrapped(tmp_path):
    result, shown = _repair(tmp_path, "rows", ROWS)
    assert result.verified, shown
    assert "    with torch.no_grad():\n        emb.weight.index_copy_(" in result.repaired, shown


MASKED = '''\
    import torch


    def compute():
        torch.manual_seed(0)
        c = torch.randn(6, 4, requires_grad=True)
        c.index_copy_(0, torch.tensor([0, 5]), torch.zeros(2, 4))
        loss = (c * torch.arange(4.0)).pow(2).sum()
        loss.backward()
        return {"c": c.grad}
'''


def test_an_overwrite_of_part_of_a_fresh_plain_leaf_gets_no_wrap(tmp_path):
    """The rows set right after the leaf is made may be fixed entries (the copy meaning: their
    gradient is zero) or an initialisation (no-grad): nothing in the program says which."""
    result, shown = _repair(tmp_path, "masked", MASKED)
    assert "no_grad" not in result.repaired, shown
    assert not result.verified, shown


LEAF_LOSS = '''\
    import torch


    def add_term(total, term):
        total += term


    def compute():
        torch.manual_seed(0)
        w = torch.randn(4, requires_grad=True)
        x = torch.randn(3, 4)
        total = torch.zeros(1, requires_grad=True)
        for row in x:
            add_term(total, (w * row).sum().tanh())
        total.backward()
        return {"w": w.grad}
'''


def test_a_value_carrying_another_leaf_s_gradient_into_a_plain_leaf_gets_no_wrap(tmp_path):
    """The leaf loss is summed from terms that require grad: a wrap would drop ``w``'s gradient,
    the one the program reads."""
    result, shown = _repair(tmp_path, "leaf_loss", LEAF_LOSS)
    assert "no_grad" not in result.repaired, shown


STEP = '''\
    import torch


    def compute():
        torch.manual_seed(0)
        x = torch.randn(5, requires_grad=True)
        scale = torch.linspace(0.5, 1.5, 5)
        print(float((x * scale).sum()))
        x.exp_()
        loss = (x * scale).sum()
        loss.backward()
        return {"x": x.grad}
'''


def test_a_computation_step_on_a_leaf_whose_grad_is_read_is_not_verified_as_no_grad(tmp_path):
    """``x.exp_()`` is a step of the computation and ``x.grad`` is read: the gradient it reads
    goes through the update, so no ``no_grad`` wrap is verified (a copy meaning may be)."""
    result, shown = _repair(tmp_path, "step", STEP)
    if result.verified:
        assert "no_grad" not in result.repaired, shown


EDIT_FROM_ANOTHER = '''\
    import torch
    import torch.nn as nn


    def compute():
        torch.manual_seed(0)
        lin = nn.Linear(4, 3)
        emb = nn.Embedding(5, 4)
        ids = torch.tensor([0, 2, 4])
        scale = lin.weight[1].norm() / emb.weight[2].norm()
        for row in (0, 1):
            lin.weight[row] -= emb.weight[2] * scale
        loss = lin(emb(ids)).pow(2).sum()
        loss.backward()
        return {name: p.grad for name, p in [*lin.named_parameters(), *emb.named_parameters()]}
'''


def test_an_edit_whose_value_carries_another_parameter_s_gradient_is_unproven_at_once(tmp_path):
    """The rows of ``lin.weight`` get a value computed from ``emb.weight`` and from ``lin.weight``
    itself, with grad on, and a backward then reaches both: neither meaning fits (the knowledge
    edit of a public report has this shape). No rewrite can be proven against a reference that
    does not exist, so repair stops at the first and says why, instead of trying every other."""
    result, shown = _repair(tmp_path, "edit", EDIT_FROM_ANOTHER)
    assert not result.verified, shown
    assert result.verification is not None and result.verification.verdict.value == "unproven", shown
    assert "the no-grad meaning does not fit" in shown, shown
    assert len(result.attempts) == 1, shown
