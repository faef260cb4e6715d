"""Stop 58 (safe58): a loop's sum of its layers' outputs, `if i == 0: acc = c` / `else: acc += c`.

mmocr's FPEM_FFM (realworld set4/403): `c2, c3 = fpem(c2, c3)` for each layer of a ModuleList,
the first turn's outputs kept as `c2_ffm = c2`, the later ones added with `c2_ffm += c2`. That
overwrites the first turn's output, which its ReLU saved: backward raises. The maintainers'
fix is `c2_ffm = c2_ffm + c2`. The safe tier held back (manual: `unknown-type`, and `alias` for
the rebinding): it did not know a loop member's output is a tensor, counted `c2` (rebound on the
next turn) as `c2_ffm`'s other name, and took the loop's module call for one that may keep what
it is given. Now it sees the three (``analysis/turn_copies.py``, ``kept._functions_run``) and
writes the maintainers' fix; the program runs forward and backward with their values and grads.

The look-alikes keep their verdicts: a block that keeps its input (the first turn's tensor is
held elsewhere: unsafe), a block that hands an input back (no new tensor: `c` is still the
same: manual), a forward hook of the file keeping inputs (unsafe), a rebinding only some turns
run (manual), and safe57's torch-function shapes (manual).
"""

from __future__ import annotations

import ast

import pytest
import torch

from codemod.config import Settings
from tests.programs import fixed_source, process_in_project

NECK = '''\
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.a = nn.Linear(d, d)
        self.b = nn.Linear(d, d)
        self.relu = nn.ReLU()

    def forward(self, x, y):
        KEEP
        x = self.relu(self.a(x) + y)
        y = self.relu(self.b(y) + x)
        return x, y


class Neck(nn.Module):
    def __init__(self, d, n):
        super().__init__()
        self.blocks = nn.ModuleList()
        for _ in range(n):
            self.blocks.append(Block(d))

    def forward(self, x, y):
        for i, blk in enumerate(self.blocks):
            x, y = blk(x, y)
            if i == 0:
                x_acc = x
                y_acc = y
            else:
                x_acc += x
                y_acc += y
        return x_acc * y_acc


def main():
    torch.manual_seed(0)
    neck = Neck(4, 3)
    x, y = torch.randn(2, 4), torch.randn(2, 4)
    out = neck(x, y)
    out.sum().backward()
    return out, {n: p.grad for n, p in neck.named_parameters()}
'''

STACK = '''\
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.a = nn.Linear(d, d)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.a(x))


class Stack(nn.Module):
    def __init__(self, d, n):
        super().__init__()
        self.blocks = nn.ModuleList([Block(d) for _ in range(n)])

    def forward(self, x):
        for i, blk in enumerate(self.blocks):
            x = blk(x)
            if i == 0:
                acc = x
            else:
                acc += x
        return acc


def main():
    torch.manual_seed(0)
    stack = Stack(4, 3)
    x = torch.randn(2, 4)
    out = stack(x)
    out.sum().backward()
    return out, {n: p.grad for n, p in stack.named_parameters()}
'''

PLAIN = {"x_acc += x": "x_acc = x_acc + x", "y_acc += y": "y_acc = y_acc + y", "acc += x": "acc = acc + x"}


def _run(source: str):
    space: dict = {"__name__": "case"}
    exec(compile(source, "case.py", "exec"), space)
    return space["main"]()


def _maintainers(source: str) -> str:
    for write, plain in PLAIN.items():
        source = source.replace(f" {write}\n", f" {plain}\n")
    return source


def _statuses(source: str) -> list:
    lines = [i + 1 for i, text in enumerate(source.splitlines()) if text.strip() in PLAIN]
    assert lines
    return [(f.status.value if f.status else None, f.reason)
            for f in process_in_project(source, Settings()).findings if f.span.line in lines]


def _same(got, want) -> None:
    out, grads = got
    assert torch.equal(out, want[0])
    assert grads.keys() == want[1].keys()
    for name, grad in grads.items():
        assert torch.equal(grad, want[1][name]), name


@pytest.mark.parametrize("source", [NECK.replace("        KEEP\n", ""), STACK], ids=["tuple-of-outputs", "one-output"])
def test_the_layers_sum_gets_the_maintainers_fix(source):
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _run(source)
    statuses = _statuses(source)
    assert statuses and all(s == ("safe", None) for s in statuses), statuses
    fixed = fixed_source(source, project=True)
    assert fixed == _maintainers(source)  # (no other name rebound with it: `x_acc = x = ...` was wrong)
    _same(_run(fixed), _run(_maintainers(source)))


def _not_safe(source: str) -> None:
    statuses = _statuses(source)
    assert statuses and all(s[0] in ("unsafe", "manual") for s in statuses), statuses
    assert fixed_source(source, project=True) == source


def test_a_block_keeping_its_input_holds_the_first_turns_tensor():
    """`self.last = x`: the next block keeps the first turn's output, which `x_acc += x` changes
    in place (the program's `blocks[1].last` sees the sum); `x_acc = x_acc + x` would not."""
    source = NECK.replace("        KEEP\n", "        self.last = x\n")
    _not_safe(source)
    space: dict = {}
    exec(compile(source, "case.py", "exec"), space)
    torch.manual_seed(0)
    neck = space["Neck"](4, 3)
    with torch.no_grad():
        x, y = torch.randn(2, 4), torch.randn(2, 4)
        neck(x, y)
        kept = neck.blocks[1].last.clone()
        exec(compile(_maintainers(source), "case.py", "exec"), space)
        torch.manual_seed(0)
        other = space["Neck"](4, 3)
        other(x, y)
    assert not torch.equal(other.blocks[1].last, kept)  # the rewrite changes what the block kept


def test_a_block_handing_its_input_back_leaves_the_name_one_tensor():
    """`return x, y` with `x` as given: `x` is the first turn's tensor on every turn, and the
    program's `x_acc += x` doubles it (read by the next turn): `x` is no stale name there."""
    source = NECK.replace("        KEEP\n", "").replace("        x = self.relu(self.a(x) + y)\n", "").replace(
        "        for i, blk in enumerate(self.blocks):\n",
        "        x = torch.relu(x)\n        for i, blk in enumerate(self.blocks):\n")
    assert _stale(source, "x_acc += x") == frozenset()
    assert _stale(source, "y_acc += y") == {"y"}  # (the control: `y` is a new tensor each turn)
    assert "x_acc += x\n" in fixed_source(source, project=True)
    assert "x_acc += x\n" in fixed_source(source, Settings(unsafe_fixes=True), project=True)


def _stale(source: str, write: str) -> frozenset:
    """What ``turn_copies.stale_copies`` says of ``write``'s target's identity aliases."""
    from codemod.analysis.model import SemanticModel
    from codemod.analysis.source import Source
    from codemod.analysis.turn_copies import stale_copies

    model = SemanticModel(Source(source.encode()))
    line = next(i + 1 for i, text in enumerate(source.splitlines()) if text.strip() == write)
    node = next(n for n in ast.walk(model.module) if isinstance(n, ast.AugAssign) and n.lineno == line)
    stmt = model.statement_of(node)
    report = model.alias_report(node.target, stmt)
    return stale_copies(model, node.target, report.also_rebind, stmt)


def test_a_hook_keeping_inputs_holds_them():
    source = NECK.replace("        KEEP\n", "").replace("    neck = Neck(4, 3)\n", """\
    neck = Neck(4, 3)
    SEEN = []
    neck.blocks[1].register_forward_hook(lambda m, inp, out: SEEN.append(inp[0]))
""")
    _not_safe(source)


def test_a_rebinding_some_turns_skip_is_no_proof():
    """`if i % 2 == 0: x, y = blk(x, y)`: on the other turns `x` is still the copied tensor."""
    source = NECK.replace("        KEEP\n", "").replace(
        "            x, y = blk(x, y)\n", "            if i % 2 == 0:\n                x, y = blk(x, y)\n")
    assert _stale(source, "x_acc += x") == frozenset()
    assert _stale(NECK.replace("        KEEP\n", ""), "x_acc += x") == {"x"}  # (the control)


def test_safe57s_torch_function_shapes_stay_manual():
    """`c = torch.relu(c * w)`: a torch function is not counted a new tensor (some hand their
    input back: `x.contiguous()`, `x.float()`); safe57's verdicts stand."""
    source = """\
import torch


def f(x, w):
    c = torch.relu(x * w)
    for i in range(3):
        c = torch.relu(c * w)
        if i == 0:
            acc = c
        else:
            acc += c
    return acc + c
"""
    assert _stale(source, "acc += c") == frozenset()
    assert fixed_source(source, project=True) == source


@pytest.mark.parametrize("source", [
    NECK.replace("        KEEP\n", "").replace("        return x, y\n", "        self.out = x\n        return x, y\n"),
    STACK.replace("        return self.relu(self.a(x))\n",
                  "        out = self.relu(self.a(x))\n        self.out = out\n        return out\n"),
], ids=["tuple-of-outputs", "one-output"])
def test_a_block_keeping_its_output_holds_the_first_turns_tensor(source):
    """`self.out = x; return x, y`: the first block keeps the tensor `acc += x` changes in place."""
    _not_safe(source)
