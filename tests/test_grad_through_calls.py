"""Requires-grad through the file's own calls (stop 36, issue 24 recall): a value requires grad
where it is returned by a function of the file, or a method of the caller's class, every return of
which requires grad (``return self.fc(x)``), and a method's parameter does where every call of the
method, on an instance too (``self.gate.split(h)``, ``self.gate`` bound only to ``Gate(...)``),
passes such a value. A write into a chunk of it is then a proven IPF106.

Programs written from scratch. torch runs each: the hazard raises, the look-alikes (grad off in the
helper, a constant also passed, an input that requires no grad) run, and stay unproven; the fixed
program's gradients equal an out-of-place one's.
"""

from __future__ import annotations

import torch

from codemod.config import Settings
from codemod.engine.pipeline import fix_source, process_source

PROGRAM = """\
import torch
import torch.nn as nn


class Gate:
    def __init__(self, alpha):
        self.alpha = alpha

    def split(self, h):
        a, b = h.chunk(2, dim=-1)
        b.mul_(self.alpha)
        return a * b


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)
        self.gate = Gate(0.5)

    def features(self, x):
        return self.fc(x)

    def forward(self, x):
        return self.gate.split(self.features(x))


def grads():
    torch.manual_seed(0)
    net = Net()
    net(torch.randn(3, 4)).pow(2).sum().backward()
    return {n: p.grad for n, p in net.named_parameters()}
"""
WRITE = 11  # b.mul_(self.alpha)
OUT_OF_PLACE = PROGRAM.replace("        b.mul_(self.alpha)\n", "        b = b.mul(self.alpha)\n")
LOOK_ALIKES = {
    "grad_off_in_the_helper": PROGRAM.replace("        return self.fc(x)\n",
                                              "        with torch.no_grad():\n            return self.fc(x)\n")
                                     .replace("net(torch.randn(3, 4)).pow(2).sum().backward()",
                                              "assert not net(torch.randn(3, 4)).requires_grad"),
    # the only call that runs passes a constant (Net's is never run): not every call passes grad
    "a_constant_also_passed": PROGRAM.replace("def grads():\n",
                                              "def probe():\n    return Gate(1.0).split(torch.ones(2, 8))\n\n\n"
                                              "def unused():\n") + "\n\ndef grads():\n    return {'out': probe()}\n",
    "an_input_without_grad": PROGRAM.replace("        return self.fc(x)\n", "        return x * 2\n")
                                    .replace("nn.Linear(4, 8)", "nn.Linear(8, 8)")
                                    .replace("torch.randn(3, 4)", "torch.randn(3, 8)")
                                    .replace("        return self.gate.split(self.features(x))\n",
                                             "        return self.fc(self.gate.split(self.features(x)))\n")
                                    .replace("return a * b", "return torch.cat([a, b], -1)"),
}


def _run(source: str, name: str = "grads"):
    space: dict = {"__name__": "case"}
    exec(compile(source, "case.py", "exec"), space)
    return space[name]()


def _proven(source: str):
    result = process_source(source.encode(), "case.py", Settings(select=("IPF1",)))
    assert result.error is None, result.error
    return [(f.code, f.span.line) for f in result.findings]


def test_the_view_write_raises_and_its_out_of_place_form_runs():
    try:
        _run(PROGRAM)
    except RuntimeError as error:
        assert "is a view and is being modified inplace" in str(error)
    else:
        raise AssertionError("the write into a chunk of what requires grad ran")
    assert all(g is not None for g in _run(OUT_OF_PLACE).values())


def test_grad_flows_through_a_method_and_into_an_instance_method_argument():
    assert PROGRAM.splitlines()[WRITE - 1].strip() == "b.mul_(self.alpha)"
    assert ("IPF106", WRITE) in _proven(PROGRAM)


def test_the_fix_gives_the_out_of_place_gradients():
    result = fix_source(PROGRAM.encode(), "case.py", Settings())
    assert result.error is None and result.fixed is not None and result.fixed != PROGRAM
    got, want = _run(result.fixed), _run(OUT_OF_PLACE)
    assert got.keys() == want.keys()
    assert all(torch.allclose(got[k], want[k]) for k in want)


def test_look_alikes_run_and_stay_unproven():
    for name, source in LOOK_ALIKES.items():
        assert source != PROGRAM, name
        _run(source)  # no error: the chunk written requires no grad there (or is never one that does)
        assert ("IPF106", WRITE) not in _proven(source), name
