"""Issue 24 (recall): an in-place chain whose first link saves the tensor it writes.

``buf.exp_().sub_(x)``: ``exp_`` saves its result (``buf`` itself) for backward, and the next link
writes ``buf`` in place on the same line, so backward finds the saved result modified (seen on
lerobot's depth_utils, stop 52). Which in-place methods save the tensor they write is measured
(``torch_api.OP_SAVES_MEASURED``: ``input0``/``output``); ``mul_``, ``add_``, ``clamp_``, ``abs_`` save
nothing of it, and a chain of those is no hazard; ``pow_(2)`` (a number exponent) saves nothing of
it either, whatever a tensor exponent does. Every program is run with torch here.
"""

from __future__ import annotations

import textwrap

import pytest

from codemod.config import Settings
from tests.programs import process_in_project, raises_inplace

HEADER = "import torch\n\n\n"

PROBES = {
    "exp_then_sub": """\
        def main():
            w = torch.rand(3, requires_grad=True)
            buf = w * 2
            buf.exp_().sub_(1)
            buf.sum().backward()
        """,
    "sigmoid_then_mul_on_a_parameter_product": """\
        def main():
            lin = torch.nn.Linear(3, 3)
            h = lin(torch.rand(2, 3))
            h.sigmoid_().mul_(2)
            h.sum().backward()
        """,
    # lerobot's depth_utils: a buffer computed from the function's tensor argument (the grad
    # evidence of every other save: an argument may be an activation)
    "exp_then_sub_on_a_copy_of_the_argument": """\
        def f(quantized, shift):
            buf = quantized.to(dtype=torch.float32, copy=True)
            buf.exp_().sub_(shift)
            return buf

        def main():
            f(torch.rand(3, requires_grad=True), 1.0).sum().backward()
        """,
}

CONTROLS = {
    "mul_then_add": PROBES["exp_then_sub"].replace("buf.exp_().sub_(1)", "buf.mul_(2).add_(1)"),
    "pow_with_a_number_then_sub": PROBES["exp_then_sub"].replace("buf.exp_().sub_(1)", "buf.pow_(2).sub_(1)"),
    "exp_alone": PROBES["exp_then_sub"].replace("buf.exp_().sub_(1)", "buf.exp_()"),
    "no_grad_anywhere": PROBES["exp_then_sub"].replace("requires_grad=True", "requires_grad=False").replace(
        "buf.sum().backward()", "buf.sum()"),
}


def _proven(body: str) -> list:
    result = process_in_project(HEADER + textwrap.dedent(body), Settings(select=("IPF1",)))
    return [(f.code, f.reason) for f in result.findings]


@pytest.mark.parametrize("name", sorted(PROBES))
def test_probe_raises_and_is_proven(name):
    assert raises_inplace(HEADER + textwrap.dedent(PROBES[name])), "the probe must raise with torch"
    found = _proven(PROBES[name])
    assert found, "a chain whose first link saves what the next one writes must be proven"


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_control_runs_and_is_not_proven(name):
    assert not raises_inplace(HEADER + textwrap.dedent(CONTROLS[name])), "the control must run"
    assert _proven(CONTROLS[name]) == []
