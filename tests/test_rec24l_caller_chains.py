"""Issue 24 (default `check`, rec24l): a module whose `forward` starts with an in-place layer
writes into what its caller hands it. The write is a proven hazard where a call of the module
passes a tensor an op saved before the call (docs/concepts.md, "Through callers"). Two ways of
building the module hid that call:

- the module is the first member of an `nn.Sequential(...)` written out member by member
  (`self.body = nn.Sequential(PreActBlock(c), ...)`): calling the chain hands its input to the
  first member's `forward`;
- the module is made by a factory function of the file whose every `return` builds that one
  class (`def dws_block(c): return PreActBlock(c)`; `self.body = dws_block(c)`);
- the module is the first added to `self.body = nn.Sequential()` by `self.body.add_module(name, m)`
  in a loop of `__init__` (whose computed name replaces a member of that container, no user
  module's attribute).

The programs are written from the pattern (a pre-activation block after a shortcut convolution
that saved the unit's input), run with torch: the original raises at backward; the fix's
gradients equal the out-of-place program's. The negative controls stay off the default report:
a first member that is not the writing block (a convolution first: its output is fresh), a
factory that may build another class, a shortcut that saves nothing, a first add under an `if`,
a container whose members are also changed another way.
"""

from __future__ import annotations

import textwrap

import pytest
import torch

from codemod.config import Settings
from tests.programs import fixed_source, process_in_project, raises_inplace, run_program

BLOCK = """\
import torch
import torch.nn as nn


class PreActBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.act = nn.ReLU(inplace=True)
        self.conv = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x):
        x = self.act(x)
        return self.conv(x)


class PlainBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x):
        return self.conv(x)


"""
ACT_LINE = 8  # `self.act = nn.ReLU(inplace=True)`

UNIT = """\
class Unit(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.skip = nn.Conv2d(c, c, 1)
        self.body = {body}

    def forward(self, x):
        identity = {identity}
        return self.body(x) + identity


def main():
    torch.manual_seed(0)
    stem = nn.Conv2d(3, 4, 3, padding=1)
    unit = Unit(4)
    out = unit(stem(torch.randn(2, 3, 6, 6)))
    out.pow(2).mean().backward()
    return [stem.weight.grad] + [p.grad for p in unit.parameters()]
"""

FACTORY = """\
def make_block(c):
    return PreActBlock(c)


def make_either(c, pre):
    if pre:
        return PreActBlock(c)
    return PlainBlock(c)


"""


ADDED = """\
        self.body = nn.Sequential()
        for i in range(reps):
            {guard}self.body.add_module("block{{}}".format(i), {block})
        if pool:
            self.body.add_module("pool", nn.MaxPool2d(3, stride=1, padding=1))
"""


def program(body: str, identity: str = "self.skip(x)") -> str:
    return BLOCK + FACTORY + UNIT.format(body=body, identity=identity)


def added_program(block: str = "make_block(c)", guard: str = "", extra: str = "") -> str:
    """The unit's body built by `add_module` in a loop (`reps` and `pool` are constructor flags)."""
    source = program("None")
    source = source.replace("    def __init__(self, c):\n        super().__init__()\n        self.skip",
                            "    def __init__(self, c, reps=2, pool=True):\n        super().__init__()\n        self.skip")
    built = ADDED.format(block=block, guard=guard)
    source = source.replace("        self.body = None\n", built + extra)
    return source


POSITIVE = {
    "sequential-first-member": "nn.Sequential(PreActBlock(c), nn.BatchNorm2d(c))",
    "sequential-of-blocks": "nn.Sequential(PreActBlock(c), PreActBlock(c))",
    "factory": "make_block(c)",
    "factory-in-sequential": "nn.Sequential(make_block(c), PlainBlock(c))",
}

NEGATIVE = {
    # the chain starts with a convolution: the block writes into the conv's fresh output
    "conv-first": ("nn.Sequential(nn.Conv2d(c, c, 1), PreActBlock(c))", "self.skip(x)"),
    # the factory may build a block that writes nothing: the class is not known
    "factory-either": ("make_either(c, True)", "self.skip(x)"),
    # nothing saved the unit's input before the call (an identity shortcut)
    "identity-shortcut": ("nn.Sequential(PreActBlock(c), nn.BatchNorm2d(c))", "x * 1"),
}


def proven_act_lines(source: str) -> list:
    result = process_in_project(source, Settings(select=("IPF1",)))
    return [f.span.line for f in result.findings if f.code.startswith("IPF1")]


ADDED_POSITIVE = {
    "added-by-factory": added_program(),
    "added-by-class": added_program(block="PreActBlock(c)"),
}

ADDED_NEGATIVE = {
    # the first add runs only under a condition (false here): the first member is not known
    "added-under-if": added_program(guard="if reps > 5:\n                "),
    # the attribute is set again (a convolution put first): the added chain is not what runs
    "added-then-rebuilt": added_program(extra="        self.body = nn.Sequential(nn.Conv2d(c, c, 1), *self.body)\n"),
}


@pytest.mark.parametrize("name", sorted(ADDED_POSITIVE))
def test_the_first_added_member_writes_a_saved_input(name):
    source = ADDED_POSITIVE[name]
    assert raises_inplace(source), "the program must die at backward"
    assert ACT_LINE in proven_act_lines(source)
    fixed = fixed_source(source, project=True)
    control = source.replace("nn.ReLU(inplace=True)", "nn.ReLU()")
    for got, want in zip(run_program(fixed), run_program(control)):
        assert torch.allclose(got, want)


@pytest.mark.parametrize("name", sorted(ADDED_NEGATIVE))
def test_an_unplaced_first_add_stays_off_the_default_report(name):
    source = ADDED_NEGATIVE[name]
    run_program(source)  # these work: the conv first (or no block on the first turn) writes nothing saved
    assert ACT_LINE not in proven_act_lines(source)


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_block_first_in_the_call_writes_a_saved_input(name):
    source = program(POSITIVE[name])
    assert raises_inplace(source), "the program must die at backward"
    assert ACT_LINE in proven_act_lines(source)


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_the_fix_gives_the_out_of_place_gradients(name):
    source = program(POSITIVE[name])
    fixed = fixed_source(source, project=True)
    assert fixed != source
    control = source.replace("nn.ReLU(inplace=True)", "nn.ReLU()")
    for got, want in zip(run_program(fixed), run_program(control)):
        assert torch.allclose(got, want)


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_look_alikes_stay_off_the_default_report(name):
    body, identity = NEGATIVE[name]
    source = program(body, identity)
    if name != "factory-either":
        run_program(source)  # these work: nothing saved is written
    assert ACT_LINE not in proven_act_lines(source)


def test_the_program_shapes_are_what_the_tests_say():
    """The control program (no in-place layer) runs; the bodies are all built as written."""
    source = program(POSITIVE["factory"]).replace("nn.ReLU(inplace=True)", "nn.ReLU()")
    assert len(run_program(source)) == 5
    assert textwrap.dedent(BLOCK).splitlines()[ACT_LINE - 1].strip() == "self.act = nn.ReLU(inplace=True)"


# ------------------------------------------------ a factory that returns one nn.Sequential chain
FUSE = """\
import torch
import torch.nn as nn


def conv_bn_relu(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), {last})


def conv_bn_maybe_relu(cin, cout, act):
    if act:
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU())
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout))


class Fuse(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.lateral = {factory}
        self.top = nn.Conv2d(c, c, 1)

    def forward(self, x, y):
        out = self.lateral(x)
        out += self.top(y)
        return out


def main():
    torch.manual_seed(0)
    fuse = Fuse(4)
    out = fuse(torch.randn(2, 4, 5, 5), torch.randn(2, 4, 5, 5))
    out.pow(2).mean().backward()
    return [p.grad for p in fuse.parameters()]
"""
IADD_LINE = 23  # `out += self.top(y)`


def fuse_program(factory: str = "conv_bn_relu(c, c)", last: str = "nn.ReLU(inplace=True)") -> str:
    return FUSE.format(factory=factory, last=last)


def proven_lines(source: str) -> list:
    result = process_in_project(source, Settings(select=("IPF1",)))
    return [f.span.line for f in result.findings]


@pytest.mark.parametrize("last", ["nn.ReLU(inplace=True)", "nn.ReLU()", "nn.Sigmoid()"])
def test_a_factory_chain_that_saves_its_output(last):
    """The chain the factory returns ends in a layer that saves its output: `+=` on it dies."""
    source = fuse_program(last=last)
    assert source.splitlines()[IADD_LINE - 1].strip() == "out += self.top(y)"
    assert raises_inplace(source)
    assert IADD_LINE in proven_lines(source)
    fixed = fixed_source(source, project=True)
    control = source.replace("out += self.top(y)", "out = out + self.top(y)")
    for got, want in zip(run_program(fixed), run_program(control)):
        assert torch.allclose(got, want)


@pytest.mark.parametrize("factory,last", [
    ("conv_bn_relu(c, c)", "nn.Identity()"),  # ends in BatchNorm's output through Identity: saved by nothing
    ("conv_bn_maybe_relu(c, c, False)", "nn.ReLU()"),  # two chains: which one is built is not known
])
def test_factory_look_alikes_stay_off_the_default_report(factory, last):
    source = fuse_program(factory=factory, last=last)
    run_program(source)
    assert IADD_LINE not in proven_lines(source)
