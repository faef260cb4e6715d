"""``repair`` of an in-place module whose flag the program switches on after building it
(``for m in self.modules(): if isinstance(m, nn.Dropout): m.inplace = True``), writing over a
tensor an out-of-place op saved (a ReLU's output). Found at stop 52 (dev case set17/1108, MVANet#2:
the maintainers cloned the activation before its dropout, ``self.activation(...).clone()``).

No rewrite of the writing line unsets a flag set elsewhere, and ``repair`` said only "remove that
assignment". A clone of what the out-of-place op saved changes no value (every name binds the clone:
``y + h`` below still reads the dropped-out ``h``), so it is offered there and verified against the
oracle. The look-alike: where the tensor saved is an in-place op's result (``sigmoid_``, its input
under another name), no clone is offered and nothing is written.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.repair import render, repair  # noqa: E402

BLOCK = '''\
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.drop = nn.Dropout(0.5)
        for m in self.modules():
            if isinstance(m, nn.Dropout):
                m.inplace = True

    def forward(self, x):
        h = torch.relu(self.lin(x))
        y = self.drop(h)
        return y + h


def compute():
    torch.manual_seed(0)
    block = Block()
    x = torch.randn(3, 4)
    loss = block(x).pow(2).sum()
    loss.backward()
    return {"loss": loss.detach(), "w": block.lin.weight.grad, "b": block.lin.bias.grad}
'''
FIXED = BLOCK.replace("h = torch.relu(self.lin(x))\n", "h = torch.relu(self.lin(x)).clone()\n")
# hand-written: the dropout out of place, its result read twice (as the in-place one leaves `h`)
HAND = BLOCK.replace("                m.inplace = True\n", "                pass\n").replace(
    "        y = self.drop(h)\n        return y + h\n", "        y = self.drop(h)\n        return y + y\n")
SIGMOID = BLOCK.replace("torch.relu(self.lin(x))", "torch.sigmoid_(self.lin(x))")


def _run(text):
    namespace = {}
    exec(compile(text, "<case>", "exec"), namespace)
    return namespace["compute"]()


def test_the_program_raises_and_the_clone_equals_the_hand_reference():
    for text in (BLOCK, SIGMOID):
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            _run(text)
    want, got = _run(HAND), _run(FIXED)
    assert all(torch.allclose(want[k], got[k]) for k in want)


def test_a_flag_switched_on_later_gets_a_clone_at_the_save_site(tmp_path):
    path = tmp_path / "block.py"
    path.write_text(BLOCK)
    result = repair(f"{path}::compute", devices=["cpu"])
    assert result.verified, render(result)
    assert result.repaired == FIXED, result.repaired
    want, got = _run(HAND), _run(result.repaired)
    assert all(torch.allclose(want[k], got[k]) for k in want)


def test_an_in_place_op_that_saved_its_result_gets_no_clone(tmp_path):
    path = tmp_path / "sigmoid.py"
    path.write_text(SIGMOID)
    result = repair(f"{path}::compute", devices=["cpu"])
    assert not result.verified and ".clone()" not in result.repaired, render(result)
    assert "not fixable by a rewrite" in render(result), render(result)
