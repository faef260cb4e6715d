"""Issue 24 recall (recall47b), family C: a custom ``autograd.Function`` whose ``forward``
returns a view of a tensor it made itself (``flat = x2d @ w.t(); return flat.view(shape)``,
a kernel's flat output viewed back to the input's shape), then the output written in place
(``out += self.adapter(x)``).

PyTorch marks every output of a custom Function that is a view, of an input or of anything
made inside, as created inside a custom Function, and refuses to modify it in place where it
requires grad: "Output 0 of ...Backward is a view and is being modified inplace. This view was
created inside a custom Function". Before, only a ``forward`` returning an input or a view of
one counted. Measured here with torch; look-alikes that run and must not be proven: the view
cloned before it is returned, an output marked non-differentiable. Programs written from the
pattern: the original raises at the write, the fixed program's gradients equal an out-of-place
control.
"""

from __future__ import annotations

import torch

from codemod.config import Settings
from tests.programs import fixed_source, process_in_project, raises_inplace, run_program

PROGRAM = """\
import torch
import torch.nn as nn


class FlatLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        flat = x.reshape(-1, x.shape[-1]) @ weight.t()
        out = flat.view(*x.shape[:-1], weight.shape[0])
        return out

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        g = grad.reshape(-1, grad.shape[-1])
        return (g @ weight).view(x.shape), g.t() @ x.reshape(-1, x.shape[-1])


class Adapted(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(d, d))
        self.adapter = nn.Linear(d, d)

    def forward(self, x):
        out = FlatLinear.apply(x, self.weight)
        out += self.adapter(x)
        return out


def main():
    torch.manual_seed(0)
    net = Adapted(4)
    x = torch.randn(2, 3, 4)
    net(x).pow(2).sum().backward()
    return [p.grad for p in net.parameters()]
"""
WRITE = "        out += self.adapter(x)\n"
CONTROL = PROGRAM.replace(WRITE, "        out = out + self.adapter(x)\n")
C_ERROR = "This view was created inside a custom Function"


def proven_at(source: str):
    result = process_in_project(source, Settings())
    line = source[:source.index(WRITE)].count("\n") + 1
    return [(f.code, f.status.value if f.status else None) for f in result.findings
            if f.code.startswith("IPF1") and f.span.line == line]


def test_a_view_made_inside_forward_is_refused_and_fixed():
    assert raises_inplace(PROGRAM, message=C_ERROR)
    assert proven_at(PROGRAM) == [("IPF106", "safe")]
    result = fixed_source(PROGRAM, project=True)
    assert "out = out + self.adapter(x)" in result
    for got, want in zip(run_program(result), run_program(CONTROL)):
        assert torch.equal(got, want)


def test_returned_directly_is_refused_too():
    source = PROGRAM.replace("        out = flat.view(*x.shape[:-1], weight.shape[0])\n        return out\n",
                             "        return flat.view(*x.shape[:-1], weight.shape[0])\n")
    assert source != PROGRAM
    assert raises_inplace(source, message=C_ERROR)
    assert proven_at(source) == [("IPF106", "safe")]


def test_a_clone_returned_is_not_a_view():
    source = PROGRAM.replace("        return out\n", "        return out.clone()\n")
    run_program(source)
    assert proven_at(source) == []


def test_an_output_rebound_after_the_view_is_not_a_view():
    source = PROGRAM.replace("        return out\n", "        out = out * 1.0\n        return out\n")
    run_program(source)
    assert proven_at(source) == []
