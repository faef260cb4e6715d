"""``self.drop.inplace = True`` after the module is built (stop 36, issue 24): where ``__init__``
builds the module and then switches its flag on, each as a statement of its own body, and the
file writes no other module's flag, the module runs in place at every call, as if built with
``inplace=True``: IPF102 where that call's input was saved (no fix: ``flag-set-after``).

Programs written from scratch; torch runs each: the hazard raises at backward, the look-alikes
run (the input saved nothing, the flag is turned off again before the forward, switched on in a
branch not taken) and stay without a proven finding.
"""

from __future__ import annotations

from codemod.config import Settings
from codemod.engine.pipeline import process_source

from .backward import raises_at_backward

PROGRAM = """\
import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, d, keep=0.5):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.drop = nn.Dropout(keep)
        self.drop.inplace = True

    def forward(self, x):
        return self.drop(torch.exp(self.fc(x)))


def run():
    torch.manual_seed(0)
    head = Head(4)
    head(torch.randn(3, 4)).sum().backward()
    return head.fc.weight.grad
"""
FLAG = 10  # self.drop.inplace = True
LOOK_ALIKES = {
    "nothing_saved": PROGRAM.replace("torch.exp(self.fc(x))", "self.fc(x) + 1.0"),
    "turned_off_again": PROGRAM.replace("    head = Head(4)\n", "    head = Head(4)\n    head.drop.inplace = False\n"),
    "in_a_branch_not_taken": PROGRAM.replace("        self.drop.inplace = True\n",
                                             "        if keep > 0.9:\n            self.drop.inplace = True\n"),
}


def _run(source: str):
    space: dict = {"__name__": "case"}
    exec(compile(source, "case.py", "exec"), space)
    return space["run"]()


def _findings(source: str, select=("IPF1",)):
    result = process_source(source.encode(), "case.py", Settings(select=select))
    assert result.error is None, result.error
    return [(f.code, f.span.line, f.status.value if f.status else None) for f in result.findings]


def test_a_flag_switched_on_after_building_is_a_proven_hazard():
    assert PROGRAM.splitlines()[FLAG - 1].strip() == "self.drop.inplace = True"
    assert raises_at_backward(lambda: _run(PROGRAM))
    assert ("IPF102", FLAG, "manual") in _findings(PROGRAM)


def test_look_alikes_run_and_are_not_proven():
    for name, source in LOOK_ALIKES.items():
        assert source != PROGRAM, name
        assert _run(source) is not None, name
        assert not [f for f in _findings(source) if f[0] == "IPF102"], name
