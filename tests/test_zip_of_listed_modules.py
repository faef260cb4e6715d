"""A loop over ``zip(self.resnets, self.attentions)`` whose lists were built by ``append`` in a
loop (``self.resnets = nn.ModuleList(resnets)``, monai's and diffusers' UNet blocks) with a
caller in another file: the analysis must not fail on it (it raised AttributeError, an
internal error that cost the file its findings), and the write in the block stays reported."""

from __future__ import annotations

import subprocess
import sys


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


def run():
    torch.manual_seed(0)
    net = Down(4, 2)
    net(torch.randn(2, 4)).sum().backward()
    return net.resnets[0].fc.weight.grad
"""


def test_a_zip_of_module_lists_built_by_append_with_a_caller_elsewhere_is_analysed(tmp_path):
    (tmp_path / "blocks.py").write_text(BLOCKS)
    (tmp_path / "model.py").write_text(MODEL)
    run = subprocess.run([sys.executable, "-m", "codemod", "check", "--no-cache", "--select", "ALL",
                          "--output-format", "json", "blocks.py", "model.py"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode in (0, 1), run.stdout + run.stderr
    assert "internal error" not in run.stdout + run.stderr
    # the program is real: relu saved its output, `x += 1` in Attn.forward bumps its version
    sys.path.insert(0, str(tmp_path))
    try:
        import model  # noqa: PLC0415 - the program under test, written above
        try:
            model.run()
            raised = False
        except RuntimeError as error:
            raised = "modified by an inplace operation" in str(error)
    finally:
        sys.path.remove(str(tmp_path))
        for name in ("model", "blocks"):
            sys.modules.pop(name, None)
    assert raised
