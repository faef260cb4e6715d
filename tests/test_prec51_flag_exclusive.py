"""Stop 51 (prec51), sample-factory 2.1.1 ``running_mean_std.py:102``/``:107``: the save runs
under ``if self.training and not denormalize:``, the write under ``if denormalize:``. Two
``if``s, not arms of one, but one flag excludes them: a ``bool`` parameter the function never
binds again holds one value in a pass, so no pass runs both. The write on the other arm
(``else``, where ``not denormalize`` holds) raises and stays proven, and so does the same code
where the flag is an attribute (a call between the tests may change it) or is bound again.
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import proven, raises_inplace, run_program  # noqa: E402

FLAG = '''\
import torch
from torch import nn


class Norm(nn.Module):
    def forward(self, x, denormalize: bool = False):
        if self.training and not denormalize:
            self.v = x.var(0)
        if denormalize:
            x.mul_(2.0)  # MARK
        else:
            x.mul_(0.5)  # RAISES
        return x


def main():
    norm = Norm().train()
    w = torch.randn(4, requires_grad=True)
    x = torch.randn(5, 4) * w
    norm(x, True)
    x.sum().backward()
    return w.grad
'''
# the other arm, where the save ran: raises
OTHER_ARM = FLAG.replace("norm(x, True)\n    x.sum().backward()", "norm(x, False)\n    (x.sum() + norm.v.sum()).backward()")
# the flag bound again between the two tests: both may run
REBOUND = OTHER_ARM.replace("            self.v = x.var(0)\n", "            self.v = x.var(0)\n            denormalize = True\n")


def _lines(source: str, mark: str) -> set:
    return {i for i, line in enumerate(source.splitlines(), 1) if line.endswith(mark)}


def _proven_lines(source: str) -> set:
    return {line for _, line in proven(source)}


def test_two_ifs_one_flag_excludes_are_not_proven():
    assert run_program(FLAG) is not None
    found = _proven_lines(FLAG)
    assert not _lines(FLAG, "# MARK") & found
    assert _lines(FLAG, "# RAISES") <= found


def test_the_other_arm_raises():
    assert raises_inplace(OTHER_ARM)


def test_a_flag_bound_again_stays_proven():
    assert raises_inplace(REBOUND)
    assert _lines(REBOUND, "# MARK") <= _proven_lines(REBOUND)
