"""What a program prints is part of the evidence (issue 23: "a verdict names its evidence").

A rewrite can keep every gradient and output and still change what the program does where the
only reader of a value is a ``print``: a running statistic that is logged and nothing else (the
shape of the BatchNorm-style running means logged in training loops, e.g. pytorch/examples'
``imagenet`` meters), where a rewrite that turns ``running.mul_(0.9).add_(...)`` into the
out-of-place calls and drops their result keeps ``w.grad`` equal. Before, that verified on the
gradient alone. Every run is real: real torch, each version in a fresh process.
"""

from __future__ import annotations

import textwrap

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.printed import printed_difference  # noqa: E402
from codemod.runtime.verify import Verdict, render_table, verify  # noqa: E402

LOGGED_STATISTIC = """
import torch


def train_step():
    torch.manual_seed(0)
    w = torch.randn(4, 3, requires_grad=True)
    x = torch.randn(5, 4)
    h = x @ w
    running = torch.zeros(3)
    running.mul_(0.9).add_(0.1 * h.detach().mean(0))
    print("running mean", [round(v, 4) for v in running.tolist()])
    loss = h.tanh().sum()
    loss.backward()
    return {"w.grad": w.grad}
"""

GATE_SHOWN = """
import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = torch.sigmoid(self.fc(x))
        print("gate", h[:1])
        h *= 2
        return h


def compute():
    torch.manual_seed(0)
    m = Head()
    y = m(torch.randn(3, 4))
    y.sum().backward()
    print("grad norm", m.fc.weight.grad.norm().item())
    return {"w": m.fc.weight.grad}
"""


def _verify(tmp_path, source, target, old, new):
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(source))
    rewritten = path.read_text().replace(old, new)
    assert rewritten != path.read_text()
    return verify(f"{path}::{target}", rewritten_source=rewritten, devices=["cpu"])


def test_a_rewrite_that_changes_only_a_printed_value_is_not_verified(tmp_path):
    result = _verify(tmp_path, LOGGED_STATISTIC, "train_step",
                     "running.mul_(0.9).add_(", "running.mul(0.9).add(")
    table = render_table(result)
    assert result.verdict is Verdict.UNPROVEN, table
    assert "printed line 1 differs" in table and "running mean" in table


def test_the_same_program_rewritten_faithfully_is_verified_with_its_printed_lines(tmp_path):
    result = _verify(tmp_path, LOGGED_STATISTIC, "train_step",
                     "running.mul_(0.9).add_(", "running = running.mul(0.9).add(")
    table = render_table(result)
    assert result.verdict is Verdict.VERIFIED, table
    assert "printed line(s)" in table


def test_autograd_annotations_in_printed_tensors_are_not_compared(tmp_path):
    # The fix changes nothing the program means, but a printed tensor's grad_fn may change name.
    result = _verify(tmp_path, GATE_SHOWN, "compute", "h *= 2", "h = (h * 2).clone()")
    table = render_table(result)
    assert result.verdict is Verdict.VERIFIED, table
    assert result.devices[0].reference == "oracle"


def test_printed_numbers_are_compared_to_the_precision_shown():
    assert printed_difference("loss 0.123457\n", "loss 0.123458\n", 1e-6, 1e-7) is None
    assert printed_difference("tensor([1.0000e-03])", "tensor([1.0001e-03])", 0.0, 0.0) is None
    assert printed_difference("x tensor([1.], grad_fn=<MulBackward0>)", "x tensor([1.], grad_fn=<CloneBackward0>)",
                              0.0, 0.0) is None
    assert printed_difference("<Net object at 0x7f00aa>", "<Net object at 0x7f11bb>", 0.0, 0.0) is None
    assert "line 1" in printed_difference("loss 0.12\n", "loss 0.15\n", 1e-6, 1e-7)
    assert "line 2" in printed_difference("a\nstep 1\n", "a\nstep 2\n", 1e-6, 1e-7)
    assert "printed 1 line(s), the reference 2" in printed_difference("a\nb\n", "a\n", 1e-6, 1e-7)
    assert printed_difference("nan inf", "nan inf", 0.0, 0.0) is None
    assert printed_difference("loss nan", "loss 0.5", 0.0, 0.0) is not None
    assert printed_difference("tensor([1., 2.])", "tensor([2., 2.])", 0.0, 0.0) is not None
    assert printed_difference("running [0.0, 0.0]", "running [-0.0576, 0.0]", 1e-6, 1e-7) is not None
