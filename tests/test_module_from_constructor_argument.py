"""A module handed to the constructor (stop 36, issue 24 recall): ``self.act = act`` in
``__init__(self, d, act=nn.Sigmoid())`` runs the one torch module every construction of the file
passes for ``act``, or its default where none passes one; an in-place write into what it returned
is then proven as for ``self.act = nn.Sigmoid()``.

Programs written from scratch; torch runs each: the hazard raises at backward, the look-alikes run
(a module that saves nothing passed, the attribute replaced from outside before the forward) and
stay unproven.
"""

from __future__ import annotations

from codemod.config import Settings
from codemod.engine.pipeline import process_source

from .backward import raises_at_backward

PROGRAM = """\
import torch
import torch.nn as nn


class Mixer(nn.Module):
    def __init__(self, d, act=nn.Sigmoid()):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.act = act

    def forward(self, x):
        out = self.act(self.lin(x))
        out += x
        return out


def run():
    torch.manual_seed(0)
    mixer = Mixer(4)
    mixer(torch.randn(2, 4)).sum().backward()
    return mixer.lin.weight.grad
"""
WRITE = 13  # out += x
LOOK_ALIKES = {
    "a_module_that_saves_nothing_passed": PROGRAM.replace("Mixer(4)", "Mixer(4, act=nn.Identity())"),
    "replaced_from_outside": PROGRAM.replace("    mixer = Mixer(4)\n", "    mixer = Mixer(4)\n    mixer.act = nn.Identity()\n"),
}


def _run(source: str):
    space: dict = {"__name__": "case"}
    exec(compile(source, "case.py", "exec"), space)
    return space["run"]()


def _proven(source: str):
    result = process_source(source.encode(), "case.py", Settings(select=("IPF1",)))
    assert result.error is None, result.error
    return [(f.code, f.span.line) for f in result.findings]


def test_a_module_handed_to_the_constructor_is_followed():
    assert PROGRAM.splitlines()[WRITE - 1].strip() == "out += x"
    assert raises_at_backward(lambda: _run(PROGRAM))
    assert ("IPF101", WRITE) in _proven(PROGRAM)


def test_look_alikes_run_and_stay_unproven():
    for name, source in LOOK_ALIKES.items():
        assert source != PROGRAM, name
        assert _run(source) is not None, name
        assert ("IPF101", WRITE) not in _proven(source), name
