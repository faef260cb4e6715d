"""Soundness (fix52): a tensor made over memory something else holds is not the name's own.

`torch.from_numpy(arr)` (also `frombuffer`, `from_file`, `from_dlpack`) and the legacy
`torch.Tensor(arr)` over a float32 NumPy array share that memory: a write into the tensor in
place is seen through `arr`. The out-of-place rewrite (`x = x / 2`) writes a new tensor and `arr`
no longer changes, so a program that reads `arr` after the write computes something else. Before
fix52 both a local write (`holders`: no other holder known) and a `forward` input's write
(`arguments._fresh`: a torch call that is no view nor in-place op) were safe fixes. Each program
below works (no backward is run: the hazard is real only once one is) and is run with torch to
show that the rewrite would change what it returns; a tensor made from sizes stays the name's own.
Each returns the product itself (not `.detach()`ed): a value that leaves only detached reaches no
backward, and since stop 56 (prec56b) such a save is not proven at all.
"""

from __future__ import annotations

import numpy as np
import torch

from codemod.config import Settings
from tests.programs import process_in_project, run_program

LOCAL = """\
import numpy as np
import torch


def main():
    w = torch.ones(3, requires_grad=True)
    arr = np.ones((2, 3), dtype=np.float32)
    x = torch.from_numpy(arr)
    y = w * x
    x /= 2
    return [torch.tensor(arr), y]
"""
LOCAL_LINE = 10

FORWARD = """\
import numpy as np
import torch
import torch.nn as nn


class Half(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = nn.Parameter(torch.ones(d))

    def forward(self, x):
        y = self.w * x
        x /= 2
        return y.sum() + x.sum()


def main():
    net = Half(3)
    arr = np.ones((2, 3), dtype=np.float32)
    x = MAKE
    out = net(x)
    return [torch.tensor(arr), out]
"""
FORWARD_LINE = 13


def _statuses(source: str, line: int):
    result = process_in_project(source, Settings(select=("IPF1",)))
    return [f.status.value for f in result.findings if f.span.line == line]


def test_a_local_tensor_over_a_numpy_array_gets_no_safe_fix():
    assert _statuses(LOCAL, LOCAL_LINE) and "safe" not in _statuses(LOCAL, LOCAL_LINE)
    rewritten = LOCAL.replace("x /= 2", "x = x / 2")
    assert not torch.equal(run_program(LOCAL)[0], run_program(rewritten)[0])


def test_a_local_tensor_made_by_a_factory_keeps_the_safe_fix():
    assert _statuses(LOCAL.replace("torch.from_numpy(arr)", "torch.ones(2, 3)"), LOCAL_LINE) == ["safe"]


def test_a_forward_input_over_a_numpy_array_gets_no_safe_fix():
    for make in ("torch.from_numpy(arr)", "torch.Tensor(arr)"):
        source = FORWARD.replace("MAKE", make)
        found = _statuses(source, FORWARD_LINE)
        assert found and "safe" not in found, (make, found)
        rewritten = source.replace("x /= 2", "x = x / 2")
        assert not torch.equal(run_program(source)[0], run_program(rewritten)[0]), make


def test_a_forward_input_made_from_sizes_keeps_the_safe_fix():
    for make in ("torch.ones(2, 3)", "torch.Tensor(2, 3)", "torch.tensor(arr)"):
        assert _statuses(FORWARD.replace("MAKE", make), FORWARD_LINE) == ["safe"], make


def test_torch_shares_the_arrays_memory():
    """What the rule relies on, measured: the legacy constructor over a float32 array and
    `from_numpy` share its memory; `torch.tensor` copies."""
    for make in (torch.from_numpy, torch.Tensor):
        arr = np.ones(3, dtype=np.float32)
        make(arr).add_(1)
        assert arr[0] == 2
    arr = np.ones(3, dtype=np.float32)
    torch.tensor(arr).add_(1)
    assert arr[0] == 1
