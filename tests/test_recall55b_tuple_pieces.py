"""A piece of the tuple a user function or module returns (``a, b = self.block(x, y)`` with
``return self.relu(self.conv(x)), self.relu(self.conv(y))``; mmocr's FPEM_FFM, ``c2, c3, c4, c5 =
fpem(c2, c3, c4, c5)`` for each FPEM of a ModuleList, then ``c2_ffm += c2``) is the output of the op
that made it there: where autograd saves that output, a later write into the piece breaks backward.
The summary of a callee said one thing for its whole result (a tuple is no op's output: not
saved), so the unpacked names were never proven. Now ``Summary.pieces`` says it per place where
every ``return`` is a tuple display of one width; a place is saved where some return's piece is
a saved output and none is unknown, and for a call that runs one of several modules (a loop over
members, a module built on branches) only where every member's piece is. Every program is run."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import raises_proven, runs_unproven  # noqa: E402

_HELPER = """import torch


def pair(x, y):
    {body}


def main():
    w = torch.randn(3, requires_grad=True)
    a, b = pair(w * 2, w * 3)
    {write}
    return torch.autograd.grad((a * b).sum(), w)
"""

_MODULES = """import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 1)
        self.relu = nn.ReLU()

    def forward(self, x, y):
        return self.relu(self.conv(x)), self.relu(self.conv(y))


class Plain(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 1)

    def forward(self, x, y):
        return self.conv(x) * 2, self.conv(y) + 1


class Net(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.one = Block(c)
        self.blocks = nn.ModuleList()
        for _ in range(2):
            self.blocks.append({member})

    def forward(self, x, y):
        {body}


def main():
    torch.manual_seed(0)
    net = Net(4)
    out = net(torch.randn(1, 4, 3, 3), torch.randn(1, 4, 3, 3))
    out.sum().backward()
    return net.one.conv.weight.grad
"""


def _helper(body: str, write: str) -> str:
    return _HELPER.format(body=body, write=write)


def _modules(body: str, member: str = "Block(c)") -> str:
    return _MODULES.format(member=member, body=body.replace("\n", "\n        "))


@pytest.mark.parametrize("body, write", [
    ("return torch.relu(x), torch.relu(y)", "a += 1  # MARK"),
    ("return torch.relu(x), torch.relu(y)", "b.mul_(2)  # MARK"),
    ("s = torch.sigmoid(x)\n    return s, y * 2", "a[0] = 0  # MARK"),
    # one return's piece saved, the other's a known op's output unsaved: the first path raises
    ("if x.sum() > -1e9:\n        return torch.exp(x), y\n    return x * 2, y", "a += 1  # MARK"),
])
def test_a_saved_piece_of_a_helpers_tuple_is_proven(body, write):
    raises_proven(_helper(body, write))


@pytest.mark.parametrize("body, write", [
    ("return torch.relu(x), y * 2", "b += 1  # MARK"),  # the other piece is saved, not this one
    ("return x * 2, torch.relu(y)", "a += 1  # MARK"),
    ("return torch.relu(x), torch.relu(y)", "a = a.clone()\n    a += 1  # MARK"),
])
def test_an_unsaved_piece_stays_unproven(body, write):
    runs_unproven(_helper(body, write))


def test_pieces_of_constants_save_nothing():
    source = _helper("return torch.relu(x), torch.relu(y)", "a += 1  # MARK").replace(
        "a, b = pair(w * 2, w * 3)", "a, b = pair(torch.ones(3), torch.ones(3))").replace(
        "return torch.autograd.grad((a * b).sum(), w)", "return (a * b).sum()")
    runs_unproven(source)


@pytest.mark.parametrize("body", [
    "a, b = self.one(x, y)\na += 1  # MARK\nreturn a + b",
    "a, b = self.one(x, y)\nb.add_(1)  # MARK\nreturn a * b",
    # mmocr FPEM_FFM: the first member's outputs kept, the later members' added into them in place
    "for i, blk in enumerate(self.blocks):\n    x, y = blk(x, y)\n    if i == 0:\n        s = x\n"
    "    else:\n        s += x  # MARK\nreturn s + self.one(x, y)[0]",
    "for blk in self.blocks:\n    x, y = blk(x, y)\nx += 1  # MARK\nreturn x + y + self.one(x, y)[0]",
])
def test_a_saved_piece_of_a_modules_tuple_is_proven(body):
    raises_proven(_modules(body))


@pytest.mark.parametrize("body, member", [
    ("a, b = self.one(x, y)\na = a * 1\na += 1  # MARK\nreturn a + b", "Block(c)"),
    # every member's piece unsaved (a product, a sum): nothing autograd kept is written
    ("for blk in self.blocks:\n    x, y = blk(x, y)\nx += 1  # MARK\nreturn x + y + self.one(x, y)[0]", "Plain(c)"),
])
def test_unsaved_pieces_of_modules_stay_unproven(body, member):
    runs_unproven(_modules(body, member))


def test_members_that_differ_in_what_they_save_leave_the_piece_unknown():
    # the last member (Plain) makes the tensor written after the loop: its piece is not saved;
    # proving from the first member's (Block's) saved piece would claim a write that is harmless
    source = _modules("for blk in self.blocks:\n    x, y = blk(x, y)\nx += 1  # MARK\n"
                      "return x + y + self.one(x, y)[0]").replace(
        "        for _ in range(2):\n            self.blocks.append(Block(c))",
        "        self.blocks.append(Block(c))\n        self.blocks.append(Plain(c))")
    assert "Plain(c))" in source
    runs_unproven(source)


def test_a_piece_backward_never_reaches_stays_unproven():
    # only `b` is backpropagated: the relu that saved `a` has a node of its own, never run
    source = _helper("return torch.relu(x), torch.relu(y)", "a += 1  # MARK\n    print(bool((a > 0).all()))").replace(
        "torch.autograd.grad((a * b).sum(), w)", "torch.autograd.grad(b.sum(), w)")
    runs_unproven(source)
