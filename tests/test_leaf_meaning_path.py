"""A leaf update on the gradient's path: not the no-grad meaning (issue 23, "Meaning from the program").

A coordinate tensor made a leaf with ``requires_grad_()`` so the program can differentiate with
respect to it (a PDE residual, a saliency map), and a feature map that scales a view of it in
place inside ``forward`` (``x *= 2 * math.pi`` on ``x = coords[:, :1]``): the derivative the program
takes goes through the update (it carries the factor). Under ``torch.no_grad()`` the factor drops
out of the derivative: that wrap changes what the program computes and must not verify. The
out-of-place form (``x = x * (2 * math.pi)``) keeps it: the copy meaning, which the view's
untouched neighbour (``t = coords[:, 1:]``, read afterwards) does not contradict.

Controls: a state edit of a leaf's own values before the forward (a row nudged, then the leaf's
``.grad`` read) still gets the no-grad wrap; a view of a leaf scaled in place and then dropped,
the forward reading the leaf itself, is still that state edit.
Real torch, new programs written from the reports' patterns.
"""

from __future__ import annotations

import textwrap

import pytest

torch = pytest.importorskip("torch")

from tests.programs import repair_program  # noqa: E402


_repair = repair_program


FEATURES = '''\
    import math

    import torch
    import torch.nn as nn


    def fourier(coords):
        x, t = coords[:, :1], coords[:, 1:]
        x *= 2 * math.pi
        return torch.cat([torch.sin(x), torch.cos(x), t], 1)


    class Field(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))

        def forward(self, coords):
            return self.net(fourier(coords))


    def compute():
        torch.manual_seed(0)
        field = Field()
        coords = torch.rand(6, 2).requires_grad_()
        u = field(coords)
        du = torch.autograd.grad(u.sum(), coords, create_graph=True)[0]
        loss = (du[:, 0] + du[:, 1]).pow(2).mean()
        loss.backward()
        return {n: p.grad for n, p in field.named_parameters()}
'''


def test_a_view_of_a_coordinate_leaf_scaled_inside_forward_is_not_wrapped_in_no_grad(tmp_path):
    """The derivative with respect to ``coords`` goes through ``x *= 2 * math.pi``: a
    ``no_grad`` wrap drops the factor. Nothing is written as verified under the no-grad
    meaning; the out-of-place form verifies against the copy meaning (the view's neighbour ``t``,
    read afterwards, misses the elements written: in place it sees the same values)."""
    result, shown = _repair(tmp_path, "features", FEATURES)
    assert result.verified, shown
    assert "no_grad" not in result.repaired, shown
    assert "reference = copy meaning" in shown, shown
    assert "    x = x * (2 * math.pi)\n" in result.repaired, shown


def test_the_out_of_place_form_keeps_the_program_s_derivative(tmp_path):
    """What the copy meaning stands for: the factor in the derivative. Checked against torch
    directly (the rewrite by hand), so the test above cannot pass by a wrap that happens to agree."""
    namespace: dict = {}
    exec(textwrap.dedent(FEATURES).replace("x *= 2 * math.pi", "x = x * (2 * math.pi)"), namespace)
    copy = namespace["compute"]()
    namespace = {}
    exec(textwrap.dedent(FEATURES).replace("    x *= 2 * math.pi", "    with torch.no_grad():\n            x *= 2 * math.pi"),
         namespace)
    wrapped = namespace["compute"]()
    assert any(not torch.allclose(copy[k], wrapped[k]) for k in copy)


EDIT_THEN_FORWARD = '''\
    import torch


    def compute():
        torch.manual_seed(0)
        feats = torch.rand(12, 5)
        target = torch.rand(12, 1)
        w = torch.randn(5, 1).requires_grad_()
        before = ((feats @ w - target) ** 2).mean().item()
        w[1] *= 0.5
        loss = ((feats @ w - target) ** 2).mean()
        loss.backward()
        return {"w": w.grad, "before": torch.tensor(before)}
'''


def test_a_state_edit_before_the_forward_still_gets_the_no_grad_wrap(tmp_path):
    """Control: the edit is a state set before the computation differentiated; the gradient
    goes to ``w`` through ``feats @ w``, never through the row's view."""
    result, shown = _repair(tmp_path, "edit", EDIT_THEN_FORWARD)
    assert result.verified, shown
    assert "with torch.no_grad():\n        w[1] *= 0.5\n" in result.repaired, shown


VIEW_DROPPED = '''\
    import torch


    def compute():
        torch.manual_seed(0)
        feats = torch.rand(12, 5)
        target = torch.rand(12, 1)
        w = torch.randn(5, 1).requires_grad_()
        head = w[:2]
        head *= 0.5
        loss = ((feats @ w - target) ** 2).mean()
        loss.backward()
        return {"w": w.grad}
'''


def test_a_view_scaled_then_dropped_is_still_a_state_edit(tmp_path):
    """Control: a named view of the leaf scaled in place, the forward then reading the leaf
    itself: the view's node is on no path a backward takes."""
    result, shown = _repair(tmp_path, "dropped", VIEW_DROPPED)
    assert result.verified, shown
    assert "with torch.no_grad():\n        head *= 0.5\n" in result.repaired, shown


ACCUMULATOR = '''\
    import torch
    import torch.nn as nn


    class Tally:
        def __init__(self):
            self.total = torch.tensor(0.0, requires_grad=True)


    class Term:
        def __init__(self, tally, weight):
            self.tally = tally
            self.weight = weight

        def add(self, value):
            self.tally.total += self.weight * value


    def compute():
        torch.manual_seed(0)
        net = nn.Linear(4, 2)
        x = torch.randn(5, 4)
        tally = Tally()
        out = net(x)
        for term, value in ((Term(tally, 1.0), out.pow(2).mean()), (Term(tally, 0.1), out.abs().mean())):
            term.add(value)
        tally.total.backward()
        return {n: p.grad for n, p in net.named_parameters()}
'''


def test_a_leaf_loss_accumulated_on_an_attribute_is_the_copy_meaning(tmp_path):
    """A loss kept on an object as a leaf (``torch.tensor(0.0, requires_grad=True)``) and summed
    from terms that carry the network's gradient, then ``tally.total.backward()``: the backward
    starts at the leaf itself, and the program means the terms' gradients to reach the network.
    Under the no-grad meaning every parameter's gradient is None; the reference is the copy
    meaning, and the attribute rebound out of place verifies against it."""
    result, shown = _repair(tmp_path, "tally", ACCUMULATOR)
    assert result.verified, shown
    assert "reference = copy meaning" in shown, shown
    assert "self.tally.total = self.tally.total + self.weight * value" in result.repaired, shown
    assert "no_grad" not in result.repaired, shown
