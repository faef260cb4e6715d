"""Issue 24 (default `fix`, fix53): a project whose only dtypes besides float32, int64 and bool are
integral ones (`.int()`, `dtype=torch.int32`, `.to(torch.uint8)`: index and count tensors) still
computes every floating tensor in float32 (an integral tensor that turns floating takes the default
dtype), so `x = x op y` of a *floating* `x` has x's dtype, as `x op= y` keeps: the rewrite is safe
(no `dtype-promotion`). An `x` not known floating stays unsafe (int32 op int64 is int64, where
`x op= y` keeps int32), and any floating other dtype (`.half()`), in the file or a linked one,
or a string such as `"int8"` (quantization as often as a dtype), keeps the old answer.
"""

from __future__ import annotations

import ast
import textwrap

import pytest
import torch

from codemod.analysis.dtype import indexed_other_dtype, integral_only, other_dtype
from codemod.analysis.source import Source
from tests.programs import fixed_source, run_program, safety_marks

INTEGRAL_ONLY = [
    "y = x.int()",
    "y = torch.ones(3, dtype=torch.int)",
    "y = torch.arange(3, dtype=torch.int32)\nz = m.to(torch.uint8)",
    "y = x.type(torch.IntTensor)\nz = x.short()\nw = x.byte()",
    "from torch import int16",
    "y = x.view(torch.int32)",
]
FLOATING_TOO = [
    "y = x.int()\nz = x.half()",  # a floating one anywhere in the file settles it
    "y = x.half()\nz = x.int()",
    "y = x.to(torch.int32)\nmode = 'int8'",  # a string: quantization as often as a dtype
    "y = x.to(torch.int32, torch.float16)",
    "y = torch.zeros(3, dtype=dtype)",
    "y = x.int()\nz = torch.load('a.pt')",
    "y = x.to(torch.qint8)",
]


@pytest.mark.parametrize("code", INTEGRAL_ONLY)
def test_integral_dtypes_only(code):
    source = Source(code.encode())
    found = other_dtype(ast.parse(code))
    assert found is not None and integral_only(found)
    assert indexed_other_dtype(source) == found


@pytest.mark.parametrize("code", FLOATING_TOO)
def test_a_floating_or_unread_dtype_is_named_first(code):
    source = Source(code.encode())
    found = other_dtype(ast.parse(code))
    assert found is not None and not integral_only(found)
    assert indexed_other_dtype(source) == found


INTEGRAL = [torch.int8, torch.int16, torch.int32, torch.uint8, torch.int64, torch.bool]


def test_a_float32_target_keeps_its_dtype_whatever_integral_operand():
    """The claim, with torch: float32 op= any integral or bool tensor (full or 0-dim) or float32
    keeps float32, and so does the out-of-place form, with the same values."""
    operands = [torch.full((3,), 2, dtype=d) for d in INTEGRAL] + [torch.full((), 3, dtype=d) for d in INTEGRAL]
    operands += [torch.full((3,), 1.5), torch.tensor(0.5)]
    checked = 0
    for y in operands:
        for op in ("add", "sub", "mul", "div", "remainder", "pow", "fmod", "atan2"):
            x = torch.linspace(0.5, 2.0, 3)
            try:
                kept = getattr(x.clone(), op + "_")(y)
            except RuntimeError:
                continue
            out = getattr(torch, op)(x, y)
            assert out.dtype == kept.dtype == torch.float32, (y.dtype, op)
            assert torch.equal(out, kept), (y.dtype, op)
            checked += 1
    assert checked > 80


def test_an_integral_target_may_promote():
    """Why an integral target (or one not known floating) stays unsafe: int32 += int64 keeps
    int32, `x + y` is int64; int32 += float32 raises in place and promotes out of place."""
    x, y = torch.ones(3, dtype=torch.int32), torch.ones(3, dtype=torch.int64)
    assert x.clone().add_(y).dtype == torch.int32 and (x + y).dtype == torch.int64
    with pytest.raises(RuntimeError):
        x.clone().add_(torch.ones(3))
    assert (x + torch.ones(3)).dtype == torch.float32


HEADER = "import torch\nimport torch.nn as nn\n\n\n"
OFFSET = HEADER.count("\n")

MASKED = """\
class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x, counts):
        h = torch.relu(self.fc(x))
        mask = (torch.arange(x.shape[-1], dtype=torch.int32) < counts).{convert}()
        h *= mask
        return h


def main():
    torch.manual_seed(0)
    net = Block(6)
    x = torch.randn(4, 6)
    out = net(x, torch.tensor([[3], [1], [6], [0]], dtype=torch.int32))
    out.pow(2).sum().backward()
    return [out.detach(), net.fc.weight.grad, net.fc.bias.grad]
"""
WRITE_LINE = 9  # `h *= mask`

REFERENCE = MASKED.replace("h *= mask", "h = h * mask")

CLONED = """\
class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = nn.Parameter(torch.ones(d))

    def forward(self, z, counts):
        x = z.clone()
        y = x * self.w
        x += counts.int()
        return y + x
"""


DIVIDED = CLONED.replace("x += counts.int()", "x /= counts.int()") + """

def main():
    torch.manual_seed(0)
    net = Block(5)
    z = torch.randn(3, 5, requires_grad=True)
    out = net(z, torch.tensor([[1], [2], [3]]))
    out.pow(2).sum().backward()
    return [out.detach(), z.grad, net.w.grad]
"""


def _marks(source: str):
    return safety_marks(HEADER, source)


def _fixed(source: str) -> str:
    return fixed_source(HEADER + source, project=True)


def test_a_floating_target_in_integral_only_code_is_fixed_and_matches_the_reference():
    source = MASKED.format(convert="float")
    assert _marks(source) == [(WRITE_LINE, "safe", None)]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run_program(HEADER + source)
    fixed = _fixed(source)
    assert "h = h * mask" in fixed
    got, want = run_program(fixed), run_program(HEADER + REFERENCE.format(convert="float"))
    assert all(torch.equal(g, w) for g, w in zip(got, want))


def test_controls_stay_unsafe():
    # a half mask: a file with half tensors may have a half `h` too (half * float32 is float32)
    assert _marks(MASKED.format(convert="half")) == [(WRITE_LINE, "unsafe", "dtype-promotion")]
    # a target not known floating (a clone of an argument): int32 += int32 may be int32 += int64
    assert _marks(CLONED) == [(9, "unsafe", "dtype-promotion")]


def test_a_linked_file_with_a_floating_dtype_keeps_the_fix_unsafe(tmp_path):
    """Across files the first floating other dtype of the linked part settles it: `blocks.py`
    makes int32 only, `train.py` (importing it) `.half()`s the model."""
    import json
    import os
    import pathlib
    import subprocess
    import sys

    blocks = HEADER + MASKED.format(convert="float").split("\n\ndef main")[0] + "\n"
    (tmp_path / "blocks.py").write_text(blocks)
    train = "import torch\nfrom blocks import Block\n\nmodel = Block(4)\nidx = torch.zeros(3).int()\n"
    (tmp_path / "train.py").write_text(train)

    def statuses():
        env = {**os.environ, "PYTHONPATH": str(pathlib.Path(__file__).resolve().parent.parent)}
        run = subprocess.run([sys.executable, "-m", "codemod", "check", "--no-cache", "--format", "json", "."],
                             capture_output=True, text=True, cwd=tmp_path, env=env)
        assert run.returncode in (0, 1), run.stderr
        return [(f["status"], f["reason"]) for f in json.loads(run.stdout)["findings"]
                if f["filename"].endswith("blocks.py") and f["code"] == "IPF101"]

    assert statuses() == [("safe", None)]
    (tmp_path / "train.py").write_text(train + "model.half()\n")
    assert statuses() == [("unsafe", "dtype-promotion")]


def test_a_true_division_shows_the_target_floating():
    """`x /= n` raises on an integral `x`: where the program gets past it, `x` is floating, so the
    rewrite keeps its dtype in integral-only code, though `x` (a clone of an argument) is not
    known floating by what made it (`+=` there stays unsafe: `test_controls_stay_unsafe`)."""
    assert _marks(DIVIDED) == [(9, "safe", None)]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run_program(HEADER + DIVIDED)
    fixed = _fixed(DIVIDED)
    assert "x = x / counts.int()" in fixed
    got = run_program(fixed)
    want = run_program(HEADER + DIVIDED.replace("x /= counts.int()", "x = x / counts.int()"))
    assert all(g.dtype == w.dtype and torch.equal(g, w) for g, w in zip(got, want))
