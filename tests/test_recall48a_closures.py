"""Family A: a closure defined in a module's ``forward`` and called there (issue 24, stop 48).

OpenMMLab's blocks (and many others) write their body as a function nested in ``forward``,
``def _inner_forward(x): ...``, which ``forward`` calls directly, or hands to
``torch.utils.checkpoint`` when memory is short. The closure runs where ``forward`` runs: what
it computes from the block's input and layers is an activation of a module with parameters, as
much as the same lines written in ``forward`` itself. An in-place write there into what a layer
saved (``out += identity`` after a ReLU) breaks backward whenever ``forward`` calls the closure
directly: proven. Where the closure is only handed to something (a hook, a checkpoint with
``use_reentrant=False``, which runs it and saves nothing it writes), is called only with grad
off, or sits in a module without parameters, nothing is proven.

Every program is new (none is a corpus case); each original dies in backward where the fact is
proven, each look-alike runs and stays unproven.
"""

from __future__ import annotations

import textwrap

import pytest
import torch

from codemod.config import Settings
from tests.programs import fixed_source, process_in_project, proven, raises_inplace, run_program


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


BLOCK = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    import torch.utils.checkpoint as cp


    class Residual(nn.Module):
        # a pre-activation block: the activation of the block's input, then a residual sum into it
        def __init__(self, width, ckpt=False):
            super().__init__()
            self.fc1 = nn.Linear(width, width)
            self.fc2 = nn.Linear(width, width)
            self.act = nn.Tanh()
            self.ckpt = ckpt

        def forward(self, x):
            def body(h):
                out = self.act(h)
                skip = self.fc1(h)
                out += skip
                return self.fc2(out)

    {call}


    def main():
        torch.manual_seed(0)
        block = nn.Sequential(Residual(5), Residual(5))
        block(torch.randn(3, 5)).pow(2).sum().backward()
        return [p.grad for p in block.parameters()]
""")

DIRECT = "        return body(x)"
CHECKPOINT_OR_DIRECT = textwrap.indent(textwrap.dedent("""\
    if self.ckpt and x.requires_grad:
        return cp.checkpoint(body, x, use_reentrant=False)
    return body(x)"""), " " * 8)
DEEPER = textwrap.indent(textwrap.dedent("""\
    def twice(h):
        return body(body(h))

    return twice(x)"""), " " * 8)


@pytest.mark.parametrize("call", [DIRECT, CHECKPOINT_OR_DIRECT, DEEPER], ids=["direct", "checkpoint-or-direct", "nested"])
def test_a_write_into_a_saved_output_in_a_closure_forward_calls(call):
    """The closure runs in ``forward`` (directly, or on the branch that does not checkpoint, or
    through another closure ``forward`` calls): the Tanh's output, which it saved, is written in
    place; proven, and the fix gives the gradients of the out-of-place program."""
    source = BLOCK.replace("{call}", call)
    assert raises_inplace(source)
    assert proven(source) == [("IPF101", _line_of(source, "out += skip"))]
    fixed = fixed_source(source, project=True)
    assert "out = out + skip" in fixed
    got, want = run_program(fixed), run_program(source.replace("out += skip", "out = out + skip"))
    assert len(got) == len(want) and all(torch.equal(g, w) for g, w in zip(got, want))


def test_a_closure_of_a_helper_method_is_left_unproven():
    """A helper method ``forward`` runs (``self._body(x)``) that defines and calls its own closure:
    not proven. Such a helper may be a path ``forward`` takes only with grad off, chosen by a flag
    its callers set (ESMFold's inference-only ``_inference_forward`` and its chunked closures,
    labelled false in bench/hazard_labels.tsv): a deliberate miss here, though this one dies."""
    source = BLOCK.replace("    def forward(self, x):\n        def body(h):",
                           "    def forward(self, x):\n        return self._body(x)\n\n"
                           "    def _body(self, x):\n        def body(h):").replace("{call}", DIRECT)
    assert "def _body(self, x):" in source
    assert raises_inplace(source)
    assert proven(source) == []


@pytest.mark.parametrize("call", [
    "        return cp.checkpoint(body, x, use_reentrant=False)",  # only checkpointed: saves nothing it writes
    "        with torch.no_grad():\n            return body(x)",  # called with grad off
    "        self.last = body\n        return body(x).detach()",  # handed on: its other callers are unseen
], ids=["checkpoint-only", "grad-off", "stored"])
def test_a_closure_not_called_with_grad_from_forward_proves_nothing(call):
    source = BLOCK.replace("{call}", call).replace(
        "block(torch.randn(3, 5)).pow(2).sum().backward()",
        "(block(torch.randn(3, 5, requires_grad=True)).pow(2).sum() + sum(p.sum() for p in block.parameters())).backward()")
    run_program(source)  # it runs
    assert proven(source) == []


def test_a_closure_in_a_module_without_parameters_proves_nothing():
    """A module without parameters: what it computes requires grad only where its input does,
    which nothing here shows (the program passes a constant tensor and runs)."""
    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Squash(nn.Module):
            def __init__(self):
                super().__init__()
                self.act = nn.Sigmoid()

            def forward(self, x):
                def body(h):
                    out = self.act(h)
                    out += 1.0
                    return out

                return body(x)


        def main():
            return [Squash()(torch.randn(3, 5))]
    """)
    run_program(source)
    assert proven(source) == []


def test_a_closure_called_only_with_grad_off_saves_nothing():
    """Every call of the closure runs under ``torch.no_grad()`` (an EMA teacher's pass, a
    statistics pass): nothing it computes is saved, so writing in place into what the linear
    layer read is harmless; the program runs and nothing is reported."""
    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Teacher(nn.Module):
            def __init__(self, width):
                super().__init__()
                self.fc = nn.Linear(width, width)

            def forward(self, x):
                def body(h):
                    feats = self.fc(h)
                    h += feats
                    return h

                with torch.no_grad():
                    target = body(x.clone())
                return self.fc(x) - target


        def main():
            torch.manual_seed(0)
            teacher = Teacher(4)
            teacher(torch.randn(2, 4)).pow(2).sum().backward()
            return [p.grad for p in teacher.parameters()]
    """)
    run_program(source)
    findings = process_in_project(source, Settings()).findings
    assert [f.code for f in findings if f.span.line == _line_of(source, "h += feats")] == []

