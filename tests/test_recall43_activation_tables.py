"""A file's table of activations picked by a name (``activate_name = {"relu": nn.ReLU, "leaky":
nn.LeakyReLU, "mish": Mish()}``, ``ACTIVATIONS = {"relu": nn.ReLU, "swish": Swish}``) is often
checked before it is indexed (``assert act in ACTIVATIONS.keys()``, ``if act not in ACTIVATIONS:
raise``) and often holds entries that are no torch class (an instance, the file's own module
class, a lambda). Neither changes which class ``ACTIVATIONS[act](inplace=True)`` builds where the
name is known (its default, what the constructions pass): an in-place ReLU at the end of a conv
block saves its result, and ``out += residual`` on the block's output raises at backward.
Probes written from the public pattern of YOLO-style conv blocks and residual units, not from a
corpus case; each runs with torch. Where the name picks an entry the analysis cannot read, where
it is not known, or where the table is changed (``update``), nothing is proven."""

from __future__ import annotations

import pytest

from codemod.config import Settings
from tests.programs import process_in_project, raises_inplace, run_program


def _proven(source: str):
    result = process_in_project(source, Settings())
    return [(f.code, f.span.line) for f in result.findings if f.code.startswith("IPF1")]


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


# a table of classes and instances, checked with `.keys()`, the key the constructor's default
YOLO_BLOCK = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


class Mish(nn.Module):
    def forward(self, x):
        return x * torch.tanh(F.softplus(x))


activate_name = {"relu": nn.ReLU, "leaky": nn.LeakyReLU, "linear": nn.Identity(), "mish": Mish()}


class Conv(nn.Module):
    def __init__(self, cin, cout, k, activate="relu"):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, padding=k // 2, bias=False)
        self.bn = nn.BatchNorm2d(cout)
        assert activate in activate_name.keys()
        if activate == "relu":
            self.act = activate_name[activate](inplace=True)
        elif activate == "leaky":
            self.act = activate_name[activate](negative_slope=0.1, inplace=True)
        else:
            self.act = activate_name[activate]

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Residual(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.block = nn.Sequential(Conv(c, c // 2, 1), Conv(c // 2, c, 3))

    def forward(self, x):
        out = self.block(x)
        out += x
        return out


def main():
    net = Residual(4)
    net(torch.randn(2, 4, 6, 6)).sum().backward()
    return [p.grad for p in net.parameters()]
"""

# a table holding the file's own module class, guarded by `not in`, the key passed by the construction
SWISH_TABLE = """\
import torch
import torch.nn as nn


class Swish(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


ACTIVATIONS = {"relu": nn.ReLU, "relu6": nn.ReLU6, "swish": Swish}


class ConvAct(nn.Module):
    def __init__(self, cin, cout, act):
        super().__init__()
        if act not in ACTIVATIONS:
            raise ValueError(f"unknown activation {act}, one of {len(ACTIVATIONS)}")
        self.conv = nn.Conv1d(cin, cout, 3, padding=1)
        self.act = ACTIVATIONS[act](inplace=True)

    def forward(self, x):
        return self.act(self.conv(x))


class Unit(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.inner = ConvAct(c, c, act="relu")

    def forward(self, x):
        y = self.inner(x)
        y += x
        return y


def main():
    net = Unit(3)
    net(torch.randn(2, 3, 8)).pow(2).sum().backward()
    return [p.grad for p in net.parameters()]
"""

PROBES = [YOLO_BLOCK, SWISH_TABLE]
IDS = ["yolo-block-keys-assert", "swish-table-not-in"]
WRITES = ["out += x", "y += x"]


@pytest.mark.parametrize("source,write", list(zip(PROBES, WRITES)), ids=IDS)
def test_a_table_checked_before_use_with_other_entries_still_picks_the_saving_activation(source, write):
    assert raises_inplace(source)
    assert _proven(source) == [("IPF101", _line_of(source, write))]


# ------------------------------------------------------------------ look-alikes that run
# the default picks the instance entry (mish: saves no output)
PICKS_AN_INSTANCE = YOLO_BLOCK.replace('activate="relu"', 'activate="mish"')

# the name picks the file's own class (swish: saves no output of its own)
PICKS_OWN_CLASS = SWISH_TABLE.replace('act="relu"', 'act="swish"').replace(
    "self.act = ACTIVATIONS[act](inplace=True)", "self.act = ACTIVATIONS[act]() if act == \"swish\" else ACTIVATIONS[act](inplace=True)")

# the table is changed before it is used: relu stands for GELU (saves its input only)
UPDATED = SWISH_TABLE.replace(
    'ACTIVATIONS = {"relu": nn.ReLU, "relu6": nn.ReLU6, "swish": Swish}\n',
    'ACTIVATIONS = {"relu": nn.ReLU, "relu6": nn.ReLU6, "swish": Swish}\n'
    'ACTIVATIONS.update(relu=lambda inplace=False: nn.GELU())\n')

# the name comes from a caller the analysis does not see: any entry
UNKNOWN_NAME = SWISH_TABLE.replace(
    "    def __init__(self, c):\n        super().__init__()\n        self.inner = ConvAct(c, c, act=\"relu\")",
    "    def __init__(self, c, act):\n        super().__init__()\n        self.inner = ConvAct(c, c, act=act)").replace(
    "    net = Unit(3)", "    net = Unit(3, sorted(ACTIVATIONS)[-1])").replace(
    "self.act = ACTIVATIONS[act](inplace=True)", "self.act = ACTIVATIONS[act]() if act == \"swish\" else ACTIVATIONS[act](inplace=True)")


@pytest.mark.parametrize("source", [PICKS_AN_INSTANCE, PICKS_OWN_CLASS, UPDATED, UNKNOWN_NAME],
                         ids=["picks-an-instance", "picks-own-class", "updated", "unknown-name"])
def test_look_alikes_that_run_have_no_proven_finding(source):
    run_program(source)
    assert not _proven(source), _proven(source)
