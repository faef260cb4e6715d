"""A file that mixes tabs and spaces in one block (CPython reads it, libcst's tokenizer cannot
parse the whole module), whose first block is indented with a tab while the function with the
hazard uses spaces (the zero-restore SKConv report, bench set1/035): ``fix`` builds the fix in
that function, which parses alone, with its own indentation. Run with torch: the original
raises at backward, the rewritten file runs and gives the reference's gradients; every line
but the fixed one is kept byte for byte."""

from __future__ import annotations

import pathlib

import libcst
import pytest

from codemod.config import Settings
from codemod.engine import pipeline

torch = pytest.importorskip("torch")

from codemod.runtime.harness import load_module, max_difference, run  # noqa: E402

T = "\t"
PROGRAM = f'''import torch
import torch.nn as nn


def make_model(m):
{T}return Branches(m)


class Branches(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.convs = nn.ModuleList([])
        for i in range(m):
        {T}if i == 0:
        {T}{T}self.convs.append(nn.Sequential(nn.Linear(4, 4), nn.ReLU()))
        {T}else:
{T}            self.convs.append(nn.Sequential(
{T}            {T}nn.Linear(4, 4),
{T}                nn.ReLU()))

    def forward(self, x):
        for i, conv in enumerate(self.convs):
            fea = conv(x).unsqueeze_(dim=1)
            if i == 0:
                feas = fea
            else:
                feas = torch.cat([feas, fea], dim=1)
        return feas.sum(dim=1)


def example():
    torch.manual_seed(0)
    net = make_model(2)
    x = torch.randn(3, 4, requires_grad=True)
    net(x).pow(2).sum().backward()
    return x.grad, [p.grad for p in net.parameters()]
'''
REFERENCE = PROGRAM.replace("conv(x).unsqueeze_(dim=1)", "conv(x).unsqueeze(dim=1)")
SAFE = Settings()


def _run(text: str, tmp_path: pathlib.Path, name: str):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    return run(load_module(text, str(path), f"mixed_{name}").example)


def test_libcst_cannot_parse_the_program_and_it_raises(tmp_path):
    with pytest.raises(Exception):
        libcst.parse_module(PROGRAM)
    original = _run(PROGRAM, tmp_path, "original")
    assert not original.ok and "modified by an inplace operation" in str(original.error)


def test_default_fix_repairs_it_with_the_references_gradients(tmp_path):
    result = pipeline.process_source(PROGRAM.encode(), "net.py", SAFE, fix=True)
    assert result.error is None and result.changed
    assert result.fixed == REFERENCE  # the one line changed, tabs and spaces elsewhere kept
    fixed, reference = _run(result.fixed, tmp_path, "fixed"), _run(REFERENCE, tmp_path, "reference")
    assert fixed.ok and reference.ok
    assert max_difference(fixed.grads, reference.grads) == 0
    assert max_difference(fixed.outputs, reference.outputs) == 0
