"""``nn.Sequential(*[conv, bn])``: a list (or tuple) display spread into the constructor is the
same chain as ``nn.Sequential(conv, bn)``. An Xception block (PyTorch#15428's shape, written
here from scratch) builds its shortcut that way: the shortcut's conv saves the block input, and
the residual branch, an ``nn.Sequential(*layers)`` starting with ``nn.ReLU(inplace=True)``,
overwrites it. With the display read as its items the write is a proven hazard (IPF102), and
``inplace=False`` fixes it."""

from __future__ import annotations

import torch

from codemod.config import Settings
from tests.programs import fixed_source, process_in_project, raises_inplace, run_program

BLOCK = """\
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, cin, cout, start_with_relu=True):
        super().__init__()
        self.shortcut = nn.Sequential(*{shortcut})
        layers = []
        if start_with_relu:
            layers.append(nn.ReLU(inplace={inplace}))
        layers.append(nn.Conv2d(cin, cout, 3, padding=1, bias=False))
        layers.append(nn.BatchNorm2d(cout))
        self.residual = nn.Sequential(*layers)

    def forward(self, x):
        sc = self.shortcut(x)
        resd = self.residual(x)
        return resd + sc


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 3, padding=1)
        self.block = Block(4, 8)

    def forward(self, img):
        return self.block(self.stem(img))


def main():
    torch.manual_seed(0)
    net = Net()
    net(torch.randn(2, 3, 6, 6)).sum().backward()
    return [p.grad for p in net.parameters()]
"""

DISPLAY = "[nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout)]"
TUPLE = "(nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout))"


def _program(shortcut: str, inplace: bool = True) -> str:
    return BLOCK.replace("{shortcut}", shortcut).replace("{inplace}", str(inplace))


def _proven(source: str):
    result = process_in_project(source, Settings())
    return [f.code for f in result.findings]


def test_a_spread_list_display_is_the_chain_of_its_items():
    source = _program(DISPLAY)
    assert raises_inplace(source)
    assert "IPF102" in _proven(source)
    fixed = fixed_source(source, project=True)
    assert "nn.ReLU(inplace=False)" in fixed
    want = run_program(_program(DISPLAY, inplace=False))
    for got, ref in zip(run_program(fixed), want):
        assert torch.equal(got, ref)


def test_a_spread_tuple_display_too():
    source = _program(TUPLE)
    assert raises_inplace(source)
    assert "IPF102" in _proven(source)


def test_a_display_of_layers_that_save_nothing_proves_nothing():
    # the shortcut saves nothing of x (identities): the in-place ReLU runs fine, nothing is proven
    source = _program("[nn.Identity(), nn.Identity()]").replace("cout, 3, padding", "cin, 3, padding") \
        .replace("BatchNorm2d(cout))\n        self.residual", "BatchNorm2d(cin))\n        self.residual") \
        .replace("Block(4, 8)", "Block(4, 4)")
    assert not raises_inplace(source)
    assert "IPF102" not in _proven(source)


def test_a_display_with_a_spread_inside_stays_unread():
    source = _program("[*[nn.Conv2d(cin, cout, 1, bias=False)], nn.BatchNorm2d(cout)]")
    assert raises_inplace(source)
    assert "IPF102" not in _proven(source)  # not followed: unknown stays unknown
