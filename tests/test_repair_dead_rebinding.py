"""A run-made rewrite must not turn a write that is the point into a rebinding nobody reads
(issue 23; SAM's ``first_step``, bench case 504): ``for p in self.params: p.add_(step)`` moves the
parameters the loop's iterable holds; ``p = p.add(step)`` (or ``p = p.clone()`` before the write)
only rebinds the loop variable, and the program's compared results may never show it (here the
moved weights are only printed, then put back), so the snapshot oracle verifies a no-op. The
analysis's dead-store fact (``Holders.rebinding_loses``) refuses such a candidate, with the reason
in the report. Control: the same loop-variable write whose rebinding the loop body reads
afterwards is still rewritten out of place (the list is not read again). New programs written in
the shape of the public code, not copies of a bench case; real torch.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.repair import render, repair  # noqa: E402

# A loss probed at weights moved by a fixed step (printed), the weights put back, then trained.
PROBE = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F


class ShiftProbe:
    """Logs the loss at the weights moved by a fixed step, then moves them back."""

    def __init__(self, params, step=1e-2):
        self.params = list(params)
        self.step = step
        self.kept = []

    @torch.no_grad()
    def shift(self):
        self.kept = [p.detach().clone() for p in self.params]
        for p in self.params:
            p.add_(self.step)

    @torch.no_grad()
    def back(self):
        for p, kept in zip(self.params, self.kept):
            p.data.copy_(kept)


def compute():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x, y = torch.randn(6, 4), torch.randn(6, 1)
    probe = ShiftProbe(net.parameters())
    loss = F.mse_loss(net(x), y)
    probe.shift()
    shifted = F.mse_loss(net(x), y).item()
    print(f"loss {loss.item():.4f}, moved {shifted:.4f}")
    probe.back()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.detach()
'''

# Each cached activation scaled in the loop that sums it: the rebinding is read by the sum.
CONTROL = '''\
import torch
import torch.nn as nn


def pooled(heads):
    total = 0
    for h in heads:
        h.mul_(0.5)
        total = total + h.sum()
    return total


def compute():
    torch.manual_seed(0)
    proj = nn.Linear(4, 6)
    x = torch.randn(3, 4)
    heads = [proj(x).tanh_(), proj(2 * x).tanh_()]
    loss = pooled(heads)
    loss.backward()
    return loss.detach(), proj.weight.grad
'''


def test_a_write_into_what_a_loop_iterates_is_not_rewritten_into_a_dead_rebinding(tmp_path):
    path = tmp_path / "probe.py"
    path.write_text(PROBE)
    result = repair(f"{path}::compute")
    assert result.located and result.located[0].conflicts  # the original raises, and the run placed it
    for attempt in result.attempts:  # no attempt, verified or not, rebinds the loop variable
        assert "p = p.add(" not in attempt.repaired and "p = p.clone()" not in attempt.repaired
    assert not (result.verified and "p.add_(self.step)" not in result.repaired)
    shown = render(result)
    assert "refused" in shown and "`p`" in shown and "nothing reads" in shown, shown


def test_a_loop_variable_rebinding_read_afterwards_is_still_written(tmp_path):
    path = tmp_path / "control.py"
    path.write_text(CONTROL)
    result = repair(f"{path}::compute")
    assert result.verified, render(result)
    assert "h = h.mul(0.5)" in result.repaired
    assert "refused" not in render(result)
