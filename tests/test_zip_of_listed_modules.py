"""A loop over ``zip(self.resnets, self.attentions)`` whose lists were built by ``append`` in a
loop (``self.resnets = nn.ModuleList(resnets)``, monai's and diffusers' UNet blocks) with a
caller in another file: the analysis must not fail on it (it raised AttributeError, an
internal error that cost the file its findings)."""

from __future__ import annotations

from tests.test_recall39_callers import _findings, _gradients, _project


BLOCKS = """\
import torch
import torch.nn as nn


class Res(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return self.fc(x)


class Attn(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        x += 1
        return self.fc(x)


class Down(nn.Module):
    def __init__(self, d, n):
        super().__init__()
        resnets, attentions = [], []
        for _ in range(n):
            resnets.append(Res(d))
            attentions.append(Attn(d))
        self.resnets = nn.ModuleList(resnets)
        self.attentions = nn.ModuleList(attentions)

    def forward(self, h):
        for resnet, attn in zip(self.resnets, self.attentions):
            h = torch.relu(resnet(h))
            h = attn(h)
        return h
"""

MODEL = """\
import torch
from blocks import Down


def compute():
    torch.manual_seed(0)
    net = Down(4, 2)
    net(torch.randn(2, 4)).sum().backward()
    return net.resnets[0].fc.weight.grad.tolist()
"""


def test_a_zip_of_module_lists_built_by_append_with_a_caller_elsewhere_is_analysed(tmp_path):
    _project(tmp_path, {"blocks.py": BLOCKS, "model.py": MODEL})
    _findings(tmp_path, ["blocks.py", "model.py"], select="ALL")  # exit 0 or 1: no internal error (exit 2)
    # the program is real: relu saved its output, `x += 1` in Attn.forward bumps its version
    assert _gradients(tmp_path) is None
