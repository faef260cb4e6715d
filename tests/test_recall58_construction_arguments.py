"""A module's structure chosen by its constructor's arguments (issue 24, stop 58: dev set28/2803).

timm's PP-HGNet (hgnet.py) builds every conv unit as ``ConvBNAct(..., use_act=True, use_lab=False)``
whose ``__init__`` picks ``self.act = nn.ReLU() if use_act else nn.Identity()`` and ends with a
``self.lab`` that is ``nn.Identity()`` unless ``use_lab``; the block picks its aggregation by
``agg`` (``if agg == 'se': self.aggregation = nn.Sequential(ConvBNAct(...), ConvBNAct(...))``, else
one ending with an ESE module) and adds its input with ``x += identity``. In the V2 models the
aggregation ends with a ReLU, which saved its output: backward raises. The summaries read a class
once for all its constructions, and the stage builds ``ConvBNAct`` with ``use_act=False`` too, so
the activation was "ReLU or Identity" (unknown); the aggregation was the meet of both branches of
``agg``; and an ``nn.Identity`` at the end of a forward was read as an unknown result.

Now (1) a call of ``self.agg`` takes the value ``__init__`` leaves it on the branch every construction
takes (``Decided.final``), (2) a member built by one construction call (``ConvBNAct(c)``, a member
of ``nn.Sequential(...)`` or ``self.agg = ConvBNAct(c)``) is summarized with its ``__init__``'s tests
read at that call's arguments and the defaults it leaves, and (3) ``nn.Identity`` hands its input back
in a returned value's walk. The same block built with the arm that saves nothing (``use_act=False``,
``agg='ese'``), or a module ending that saves nothing stays unproven. Every program is run with torch.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import proven_lines, raises_proven, runs_unproven  # noqa: E402

_UNIT = """import torch
import torch.nn as nn


class Affine(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(1))

    def forward(self, x):
        return self.scale * x


class ConvBNAct(nn.Module):
    def __init__(self, c, use_act=True, use_lab=False):
        super().__init__()
        self.use_act = use_act
        self.use_lab = use_lab
        self.conv = nn.Conv2d(c, c, 1)
        self.bn = nn.BatchNorm2d(c)
        self.act = nn.ReLU() if self.use_act else nn.Identity()
        self.lab = Affine() if (self.use_act and self.use_lab) else nn.Identity()

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        x = self.act(x)
        x = self.lab(x)
        return x


class Ese(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 1)

    def forward(self, x):
        return torch.mul(x, torch.sigmoid(self.conv(x)))
"""

_BLOCK = _UNIT + """

class Block(nn.Module):
    def __init__(self, c, use_lab=False):
        super().__init__()
        self.down = ConvBNAct(c, use_act=False)
        self.agg = {agg}

    def forward(self, x):
        identity = self.down(x)
        x = self.agg(identity)
        x += identity  # MARK
        return x


def main():
    m = Block(4{block_args})
    x = torch.randn(2, 4, 3, 3)
    m(x).sum().backward()
    return m.down.conv.weight.grad
"""

_STAGE = _UNIT + """

class Block(nn.Module):
    def __init__(self, c, use_lab=False, agg='ese'):
        super().__init__()
        if agg == 'se':
            self.aggregation = nn.Sequential(ConvBNAct(c, use_lab=use_lab), ConvBNAct(c, use_lab=use_lab))
        else:
            self.aggregation = nn.Sequential(ConvBNAct(c, use_lab=use_lab), Ese(c))

    def forward(self, x):
        identity = x
        x = self.aggregation(x)
        x += identity  # MARK
        return x


class Stage(nn.Module):
    def __init__(self, c, use_lab=False, agg='ese'):
        super().__init__()
        self.downsample = ConvBNAct(c, use_act=False, use_lab=use_lab)
        self.blocks = nn.Sequential(*[Block(c, use_lab=use_lab, agg=agg) for _ in range(2)])

    def forward(self, x):
        return self.blocks(self.downsample(x))


def main():
    stage = Stage(4, {stage_args})
    x = torch.randn(2, 4, 3, 3)
    stage(x).sum().backward()
    return stage.downsample.conv.weight.grad
"""


@pytest.mark.parametrize("agg, block_args", [
    ("ConvBNAct(c)", ""),
    ("ConvBNAct(c, use_act=True)", ""),
    ("ConvBNAct(c, use_lab=use_lab)", ""),
    ("ConvBNAct(c, use_lab=use_lab)", ", use_lab=False"),
    ("nn.Sequential(ConvBNAct(c, use_act=False), ConvBNAct(c))", ""),
], ids=["default", "literal", "passed-default", "passed-literal", "sequential-member"])
def test_a_member_built_with_the_saving_arm_is_proven(agg, block_args):
    raises_proven(_BLOCK.format(agg=agg, block_args=block_args))


@pytest.mark.parametrize("agg, block_args", [
    ("ConvBNAct(c, use_act=False)", ""),
    ("ConvBNAct(c, use_lab=use_lab)", ", use_lab=True"),
    ("ConvBNAct(c, use_lab=True)", ""),
    ("nn.Sequential(ConvBNAct(c), ConvBNAct(c, use_act=False))", ""),
], ids=["no-act", "lab-passed", "lab-literal", "sequential-ends-without-act"])
def test_a_member_built_with_an_arm_that_saves_nothing_stays_unproven(agg, block_args):
    runs_unproven(_BLOCK.format(agg=agg, block_args=block_args))


@pytest.mark.parametrize("stage_args", ["agg='se'", "use_lab=False, agg='se'"])
def test_the_aggregation_every_construction_picks_is_proven(stage_args):
    raises_proven(_STAGE.format(stage_args=stage_args))


@pytest.mark.parametrize("stage_args", ["agg='ese'", "agg='se', use_lab=True"])
def test_an_aggregation_that_saves_nothing_stays_unproven(stage_args):
    runs_unproven(_STAGE.format(stage_args=stage_args))


def test_a_stage_built_both_ways_stays_unproven():
    # one stage of each kind: the block's aggregation is not one branch for every instance
    source = _STAGE.format(stage_args="agg='ese'").replace(
        "    stage = Stage(4, agg='ese')\n", "    stage = Stage(4, agg='ese')\n    Stage(4, agg='se')\n")
    run = source  # the built 'se' stage is never called: the program runs
    runs_unproven(run)
    assert not proven_lines(run)


_FLAG = """import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvAct(nn.Module):
    def __init__(self, c, act=True):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 1)
        self.act = act

    def forward(self, x):
        x = self.conv(x)
        if self.act:
            x = F.relu(x)
        return x


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.a = ConvAct(c, act=False)
        self.b = {second}

    def forward(self, x):
        y = self.a(x)
        x = self.b(y)
        x += y  # MARK
        return x


def main():
    m = Block(4)
    x = torch.randn(2, 4, 3, 3)
    m(x).sum().backward()
    return m.a.conv.weight.grad
"""


@pytest.mark.parametrize("second", ["ConvAct(c)", "ConvAct(c, True)", "ConvAct(c, act=1)"])
def test_a_forward_branch_the_construction_takes_is_proven(second):
    raises_proven(_FLAG.format(second=second))


@pytest.mark.parametrize("second", ["ConvAct(c, act=False)", "ConvAct(c, False)", "ConvAct(c, act=None)"])
def test_a_forward_branch_the_construction_leaves_stays_unproven(second):
    runs_unproven(_FLAG.format(second=second))
