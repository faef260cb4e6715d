"""sound34c: false proven hazards on programs that run (the groups of review34's repros).

Each program first runs with real torch to fix its label, then the tool is asked.
"""

from __future__ import annotations

import contextlib
import io

import pytest
import torch

from codemod.config import Settings
from codemod.engine.pipeline import process_source


def _findings(source: str):
    result = process_source(source.encode(), "case.py", Settings(select=("IPF1",)))
    assert result.error is None, result.error
    return [(f.code, f.span.line) for f in result.findings]


def _printed(source: str) -> str:
    out = io.StringIO()
    grad = torch.is_grad_enabled()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(source, "case.py", "exec"), {"__name__": "case"})
    finally:
        torch.set_grad_enabled(grad)  # (a program that switches grad off leaves the others alone)
    return out.getvalue()


# ------------------------------------------------------------------ grad switched off for the module
GRAD_OFF = """\
import torch

torch.set_grad_enabled(False)


def main():
    h = torch.zeros(2, 3, requires_grad=True)
    w = torch.zeros(2, 3)
    w.requires_grad_()
    h.mul_(0.5)
    w.add_(1)
    print(h.sum().item(), w.sum().item())


main()
"""
GRAD_OFF_LATE = """\
import torch


def main():
    h = torch.zeros(2, 3, requires_grad=True)
    h.mul_(0.5)
    print(h.sum().item())


main()
torch.set_grad_enabled(False)
"""


def test_a_leaf_written_after_the_module_switches_grad_off_is_no_proven_leaf_write():
    assert _printed(GRAD_OFF) == "0.0 6.0\n"  # the label: no "leaf Variable" error
    assert not [f for f in _findings(GRAD_OFF) if f[0] in ("IPF103", "IPF105")]


def test_grad_switched_off_after_the_code_ran_still_reports_the_leaf_write():
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        _printed(GRAD_OFF_LATE)  # the label: main() runs before grad goes off
    assert [f for f in _findings(GRAD_OFF_LATE) if f[0] == "IPF103"]


# ------------------------------------------------------------------ a frozen module, seen through a user module
FROZEN_THROUGH_FORWARD = """\
import torch
import torch.nn as nn


class AE(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(10, 4)
        for p in self.embedding.parameters():
            p.requires_grad = False

    def forward(self, ids):
        return self.embedding(ids)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.ae = AE()
        self.fc = nn.Linear(4, 1)

    def forward(self, ids):
        e = self.ae(ids)
        ids += 1
        return self.fc(e).sum() + ids.sum()


net = Net()
net(torch.tensor([1, 2, 3])).backward()
print("ok")
"""
WEIGHT_REPLACED = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(10, 4)
        self.embedding.weight = nn.Parameter(torch.randn(10, 4), requires_grad=False)
        self.fc = nn.Linear(4, 1)

    def forward(self, ids):
        e = self.embedding(ids)
        ids += 1
        return self.fc(e).sum() + ids.sum()


net = Net()
net(torch.tensor([1, 2, 3])).backward()
print("ok")
"""


@pytest.mark.parametrize("source", [FROZEN_THROUGH_FORWARD, WEIGHT_REPLACED], ids=["through-forward", "weight-replaced"])
def test_ids_fed_to_a_frozen_embedding_are_no_proven_hazard(source):
    assert _printed(source) == "ok\n"  # the label: backward runs
    assert not [f for f in _findings(source) if f[0] == "IPF101"]


def test_a_trained_embedding_through_a_forward_is_still_a_proven_hazard():
    source = FROZEN_THROUGH_FORWARD.replace("            p.requires_grad = False", "            pass")
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _printed(source)
    assert [f for f in _findings(source) if f[0] == "IPF101"]


# ------------------------------------------------------------------ a module list given a member from outside
APPENDED_OUTSIDE = """\
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return torch.sigmoid(self.fc(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block() for _ in range(3)])

    def forward(self, x, bias):
        for blk in self.blocks:
            x = blk(x)
        x += bias
        return x.sum()


net = Net()
net.blocks.append(nn.Linear(4, 4))
net(torch.randn(2, 4), torch.ones(4)).backward()
print("ok")
"""


def test_a_module_list_appended_to_from_outside_is_no_proven_hazard():
    assert _printed(APPENDED_OUTSIDE) == "ok\n"  # the label: backward runs (the last member is a Linear)
    line = APPENDED_OUTSIDE.splitlines().index("        x += bias") + 1
    assert not [f for f in _findings(APPENDED_OUTSIDE) if f == ("IPF101", line)]


def test_a_module_list_of_one_class_left_alone_is_still_a_proven_hazard():
    source = APPENDED_OUTSIDE.replace("net.blocks.append(nn.Linear(4, 4))\n", "")
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _printed(source)
    line = source.splitlines().index("        x += bias") + 1
    assert ("IPF101", line) in _findings(source)


# ------------------------------------------------------------------ a layer appended under an if the constructions decide
IF_LAYER = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, use_sig=False):
        super().__init__()
        layers = [nn.Linear(4, 4)]
        if use_sig:
            layers.append(nn.Sigmoid())
        layers.append(nn.ReLU(inplace=True))
        layers.append(nn.Linear(4, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


net = Net({})
net(torch.randn(2, 4)).sum().backward()
print("ok")
"""


def test_an_in_place_layer_after_an_if_every_construction_takes_is_reported():
    source = IF_LAYER.format("use_sig=True")
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _printed(source)
    assert [f for f in _findings(source) if f[0] == "IPF102"]


def test_an_in_place_layer_after_an_if_no_construction_takes_is_not_reported():
    source = IF_LAYER.format("")
    assert _printed(source) == "ok\n"
    assert not [f for f in _findings(source) if f[0] == "IPF102"]
