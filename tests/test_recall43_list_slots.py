"""A list of layer outputs whose slots the function also rebinds: a feature pyramid's top-down
path adds each level into the one below it in place (``outs[i - 1] += up(outs[i])``) and then
smooths that level into the same slot (``outs[i - 1] = self.smooth[i - 1](outs[i - 1])``).
When every value the list can hold at the write (what built it, what was appended, what a store
put in a slot before the write or in a loop around it) is a result its op saved for backward
(a ReLU, a sigmoid, a tanh, an exp), the write bumps a saved tensor whichever slot it hits, and
backward raises. Probes written from the public pattern of FPN necks and multi-scale fusions, not
from a corpus case; each runs with torch. Look-alikes that run (the slots rebound to results
nothing saved before the write, a store after it, numbers, grad off) get no proven finding."""

from __future__ import annotations

import pytest
import torch

from codemod.config import Settings
from tests.programs import fixed_source, process_in_project, raises_inplace, run_program


def _proven(source: str):
    result = process_in_project(source, Settings())
    return [(f.code, f.span.line) for f in result.findings if f.code.startswith("IPF1")]


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


# a pyramid's top-down path with a smoothing block rebinding each level after the add
SMOOTHED_PYRAMID = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvBNReLU(nn.Module):
    def __init__(self, cin, cout, k):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, padding=k // 2, bias=False)
        self.bn = nn.BatchNorm2d(cout)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Pyramid(nn.Module):
    def __init__(self, chans, width):
        super().__init__()
        self.lateral = nn.ModuleList([ConvBNReLU(c, width, 1) for c in chans])
        self.smooth = nn.ModuleList([ConvBNReLU(width, width, 3) for _ in chans[1:]])

    def forward(self, feats):
        outs = [self.lateral[i](f) for i, f in enumerate(feats)]
        for i in range(len(outs) - 1, 0, -1):
            outs[i - 1] += F.interpolate(outs[i], size=outs[i - 1].shape[-2:], mode="nearest")
            outs[i - 1] = self.smooth[i - 1](outs[i - 1])
        return torch.cat([o.mean((2, 3)) for o in outs], 1)


def main():
    net = Pyramid([3, 5, 7], 4)
    feats = [torch.randn(2, 3, 8, 8), torch.randn(2, 5, 4, 4), torch.randn(2, 7, 2, 2)]
    net(feats).pow(2).sum().backward()
    return [p.grad for p in net.parameters()]
"""

# each level gated by a sigmoid stored into its slot, then the level below added into it
GATED_LEVELS = """\
import torch
import torch.nn as nn


class Levels(nn.Module):
    def __init__(self, n, d):
        super().__init__()
        self.proj = nn.ModuleList([nn.Linear(d, d) for _ in range(n)])

    def forward(self, x):
        hs = [torch.tanh(lin(x)) for lin in self.proj]
        for i in range(1, len(hs)):
            hs[i] = torch.sigmoid(hs[i])
            hs[i] += hs[i - 1]
        return hs[-1]


def main():
    net = Levels(3, 5)
    net(torch.randn(4, 5)).sum().backward()
    return [p.grad for p in net.parameters()]
"""

# two scales in a list literal, one slot replaced by its exp before the fine one is added into
TWO_SCALES = """\
import torch
import torch.nn as nn


class TwoScale(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fine = nn.Sequential(nn.Linear(d, d), nn.Sigmoid())
        self.coarse = nn.Sequential(nn.Linear(d, d), nn.Tanh())

    def forward(self, x):
        scales = [self.fine(x), self.coarse(x)]
        scales[1] = torch.exp(scales[1])
        scales[0] += scales[1]
        return scales[0].sum() + scales[1].sum()


def main():
    net = TwoScale(6)
    net(torch.randn(3, 6)).backward()
    return [p.grad for p in net.parameters()]
"""

PROBES = [SMOOTHED_PYRAMID, GATED_LEVELS, TWO_SCALES]
IDS = ["smoothed-pyramid", "gated-levels", "two-scales"]
WRITES = ["outs[i - 1] += F.interpolate", "hs[i] += hs[i - 1]", "scales[0] += scales[1]"]


@pytest.mark.parametrize("source,write", list(zip(PROBES, WRITES)), ids=IDS)
def test_a_write_into_a_list_slot_whose_every_value_was_saved_is_proven(source, write):
    assert raises_inplace(source)
    assert _proven(source) == [("IPF101", _line_of(source, write))]


OUT_OF_PLACE = {
    "outs[i - 1] += F.interpolate(outs[i], size=outs[i - 1].shape[-2:], mode=\"nearest\")":
        "outs[i - 1] = outs[i - 1] + F.interpolate(outs[i], size=outs[i - 1].shape[-2:], mode=\"nearest\")",
    "hs[i] += hs[i - 1]": "hs[i] = hs[i] + hs[i - 1]",
    "scales[0] += scales[1]": "scales[0] = scales[0] + scales[1]",
}


@pytest.mark.parametrize("source", PROBES, ids=IDS)
def test_the_default_fix_gives_the_gradients_of_the_out_of_place_program(source):
    reference = source
    for old, new in OUT_OF_PLACE.items():
        reference = reference.replace(old, new)
    assert reference != source
    fixed = fixed_source(source, project=True)
    assert fixed == reference, fixed
    got, want = run_program(fixed), run_program(reference)
    assert len(got) == len(want) and all(torch.equal(g, w) for g, w in zip(got, want))


# ------------------------------------------------------------------ look-alikes that run
# every slot rebound to a plain linear layer's output (saves nothing of it) before the adds
STORED_UNSAVED = GATED_LEVELS.replace(
    "        for i in range(1, len(hs)):\n            hs[i] = torch.sigmoid(hs[i])\n",
    "        for i in range(len(hs)):\n            hs[i] = self.proj[i](hs[i])\n        for i in range(1, len(hs)):\n")

# the saving op's result stored after the adds: the adds write into linear outputs
STORED_AFTER = """\
import torch
import torch.nn as nn


class Levels(nn.Module):
    def __init__(self, n, d):
        super().__init__()
        self.proj = nn.ModuleList([nn.Linear(d, d) for _ in range(n)])

    def forward(self, x):
        hs = [lin(x) for lin in self.proj]
        for i in range(1, len(hs)):
            hs[i] += hs[i - 1]
        for i in range(len(hs)):
            hs[i] = torch.sigmoid(hs[i])
        return hs[-1]


def main():
    net = Levels(3, 5)
    net(torch.randn(4, 5)).sum().backward()
    return [p.grad for p in net.parameters()]
"""

NUMBERS = """\
import torch


def main():
    counts = [0, 0, 0]
    for i in range(1, 3):
        counts[i] = counts[i - 1] * 2
        counts[i] += 1
    return [torch.tensor(counts)]
"""

# the pyramid built under no_grad inside forward (a frozen neck): nothing is saved
NO_GRAD = SMOOTHED_PYRAMID.replace(
    "        outs = [self.lateral[i](f) for i, f in enumerate(feats)]\n",
    "        with torch.no_grad():\n            outs = [self.lateral[i](f) for i, f in enumerate(feats)]\n").replace(
    "        for i in range(len(outs) - 1, 0, -1):\n            outs[i - 1] += F.interpolate(outs[i], size=outs[i - 1].shape[-2:], mode=\"nearest\")\n"
    "            outs[i - 1] = self.smooth[i - 1](outs[i - 1])\n",
    "            for i in range(len(outs) - 1, 0, -1):\n"
    "                outs[i - 1] += F.interpolate(outs[i], size=outs[i - 1].shape[-2:], mode=\"nearest\")\n"
    "                outs[i - 1] = self.smooth[i - 1](outs[i - 1])\n").replace(
    "    net(feats).pow(2).sum().backward()\n    return [p.grad for p in net.parameters()]",
    "    return [net(feats)]")


@pytest.mark.parametrize("source", [STORED_UNSAVED, STORED_AFTER, NUMBERS, NO_GRAD],
                         ids=["stored-unsaved", "stored-after", "numbers", "no-grad"])
def test_look_alikes_that_run_have_no_proven_finding(source):
    run_program(source)
    assert not _proven(source), _proven(source)
