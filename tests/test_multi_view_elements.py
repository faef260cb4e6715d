"""An element of a name that holds a multi-view call's outputs (``rows = x.unbind()``, then
``rows[0].mul_(2)``) is a view PyTorch refuses to modify in place, as ``a`` of ``a, b =
x.unbind()`` is. Each program is run with torch: the proven finding appears exactly where the
write raises "... is a view and is being modified inplace"; the look-alikes that run stay
without one."""

from __future__ import annotations

import pytest

from codemod.config import Settings
from tests.programs import assert_same_results, fixed_source, process_in_project, raises_inplace, run_program

_REFUSED = "is a view and is being modified inplace"


def _proven(source: str):
    result = process_in_project(source, Settings())
    return [(f.code, f.span.line) for f in result.findings if f.code.startswith("IPF1")]


SCALE_ROWS = """\
import torch


def scale_rows(table, gains):
    out = table * 1.0
    rows = out.unbind(0)
    for i in range(len(gains)):
        rows[i].mul_(gains[i])
    return out


def main():
    table = torch.rand(3, 4).requires_grad_()
    out = scale_rows(table, [2.0, 3.0, 4.0])
    out.sum().backward()
    return [out.detach(), table.grad]
"""

HEADS = """\
import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.scale = d ** -0.5

    def forward(self, x):
        parts = self.qkv(x).chunk(3, dim=-1)
        parts[0].mul_(self.scale)
        att = (parts[0] @ parts[1].transpose(-2, -1)).softmax(-1)
        return att @ parts[2]


def main():
    torch.manual_seed(0)
    net = Attention(4)
    out = net(torch.randn(2, 5, 4))
    out.sum().backward()
    return [out.detach(), net.qkv.weight.grad]
"""


@pytest.mark.parametrize("source", [SCALE_ROWS, HEADS], ids=["unbind-rows", "chunk-heads"])
def test_a_write_into_an_element_of_a_multi_view_result_is_proven(source):
    assert raises_inplace(source, message=_REFUSED)
    assert [code for code, _ in _proven(source)] == ["IPF106"], _proven(source)


# ------------------------------------------------------------------ look-alikes that run
NO_GRAD_BUFFER = SCALE_ROWS.replace("torch.rand(3, 4).requires_grad_()", "torch.rand(3, 4)").replace(
    "    out.sum().backward()\n    return [out.detach(), table.grad]", "    return [out]")

REPLACED_ELEMENT = """\
import torch


def scale_first(table, gain):
    rows = list(table.unbind(0))
    rows[0] = rows[0] * gain
    return torch.stack(rows)


def main():
    table = torch.rand(3, 4).requires_grad_()
    out = scale_first(table, 2.0)
    out.sum().backward()
    return [out.detach(), table.grad]
"""

CLONED_ELEMENT = """\
import torch


def first_scaled(table, gain):
    rows = table.unbind(0)
    first = rows[0].clone()
    first.mul_(gain)
    return first


def main():
    table = torch.rand(3, 4).requires_grad_()
    out = first_scaled(table, 2.0)
    out.sum().backward()
    return [out.detach(), table.grad]
"""

UNDER_NO_GRAD = """\
import torch


def normalise_(batch, means):
    with torch.no_grad():
        rows = batch.unbind(0)
        for i in range(len(means)):
            rows[i].sub_(means[i])
    return batch


def main():
    batch = torch.rand(2, 4)
    return [normalise_(batch, [0.5, 0.25])]
"""


@pytest.mark.parametrize("source", [NO_GRAD_BUFFER, REPLACED_ELEMENT, CLONED_ELEMENT, UNDER_NO_GRAD],
                         ids=["nothing-requires-grad", "element-replaced", "element-cloned", "under-no-grad"])
def test_look_alikes_that_run_have_no_proven_finding(source):
    run_program(source)
    assert not _proven(source), _proven(source)
    assert_same_results(source)


@pytest.mark.parametrize("source", [SCALE_ROWS, HEADS], ids=["unbind-rows", "chunk-heads"])
def test_no_fix_copies_or_rebinds_the_tuple_of_outputs(source):
    """``rows`` is a tuple: a copy of it (``rows.clone()``) or a rebinding of it is no fix. What
    the default or the unsafe fix changes must run."""
    for settings in (Settings(), Settings(unsafe_fixes=True)):
        fixed = fixed_source(source, settings, project=True)
        if fixed != source:
            run_program(fixed)
