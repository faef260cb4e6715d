"""sound35a (review35's main defects 3 and 4), with their look-alikes.

- A module's ``inplace`` flag set after it is built (``self.act.inplace = False``, ``m.inplace
  = ...`` over ``self.modules()``) leaves how it runs unknown: no proven hazard. A class's own
  ``self.inplace = inplace`` is not such a write: the ReLU built in place stays proven.
- A helper of the file that keeps what it is given (a global, an attribute, a container, a
  closure) holds the caller's tensor: a write into it after the call is no safe rewrite. A
  helper that only reads it keeps the safe fix.
Each program is run with real torch: the fixed one must compute what the original does.
"""

from __future__ import annotations


import pytest
import torch

from codemod.config import Settings
from tests.programs import process_in_project, run_program


def _process(source: str, settings: Settings, fix: bool = False):
    return process_in_project(source, settings, fix)


def _run(source: str) -> list:
    return list(run_program(source))


def _backward_runs(source: str) -> bool:
    try:
        _run(source)
    except RuntimeError as error:
        assert "inplace" in str(error), error
        return False
    return True


def _proven(source: str) -> list:
    return [(f.code, f.span.line) for f in _process(source, Settings()).findings if f.code.startswith("IPF1")]


# ------------------------------------------------------------------ an `inplace` flag set later
GATED = """\
import torch
import torch.nn as nn


{extra}class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 3)
        self.gate = nn.Hardtanh(inplace=True)
        self.fc = nn.Linear(3, 1)
{after}
    def forward(self, v):
        e = torch.tanh(self.lin(v))
        return self.fc(self.gate(e))


def main():
    torch.manual_seed(0)
    head = Head()
    head(torch.randn(4, 2)).sum().backward()
    return [p.grad for p in head.parameters()]
"""
SWITCHED = {
    "member": "        self.gate.inplace = False\n",
    "enumerated": "        for m in self.modules():\n            if isinstance(m, nn.Hardtanh):\n"
                  "                m.inplace = False\n",
    "setattr": "        setattr(self.gate, \"inplace\", False)\n",
}
OWN_FLAG = """\
class Scale(nn.Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, x):
        return x.mul_(2) if self.inplace else x * 2


"""


@pytest.mark.parametrize("after", sorted(SWITCHED))
def test_a_flag_switched_off_after_the_build_is_no_proven_hazard(after):
    source = GATED.format(extra="", after=SWITCHED[after])
    assert _backward_runs(source)
    assert not _proven(source)


def test_a_module_built_in_place_and_left_so_stays_proven():
    """The control: the same Hardtanh without the later write fails at backward, and is proven,
    also beside a class of the file that keeps its own ``self.inplace`` flag."""
    for source in (GATED.format(extra="", after=""), GATED.format(extra=OWN_FLAG, after="")):
        assert not _backward_runs(source)
        assert _proven(source), source


# ------------------------------------------------------------------ a helper keeping its argument
KEEPER = """\
import torch
import torch.nn as nn

{state}


{helper}


class Body(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)

    def forward(self, v):
        y = torch.tanh(self.lin(v))
        k = note(y)
        y *= 3
        return y + k


def main():
    torch.manual_seed(0)
    body = Body()
    out = body(torch.randn(3, 2))  # (grad on: a forward run only under no_grad is no candidate, stop 57)
    return [out, *{kept}]
"""
KEEPERS = {
    "global": ("SEEN = None", "def note(t):\n    global SEEN\n    SEEN = t[0]\n    return t.mean()", "[SEEN]"),
    "container": ("LOG = []", "def note(t):\n    LOG.append(t)\n    return t.mean()", "LOG"),
    "attribute": ("class Box:\n    item = None", "def note(t):\n    Box.item = t\n    return t.mean()", "[Box.item]"),
    "closure": ("GETTERS = []", "def note(t):\n    def get():\n        return t\n    GETTERS.append(get)\n"
                "    return t.mean()", "[g() for g in GETTERS]"),
}
READER = ("", "def note(t):\n    print(t.shape)\n    return t.mean()", "[]")


def _keeper(state: str, helper: str, kept: str) -> str:
    return KEEPER.format(state=state, helper=helper, kept=kept)


@pytest.mark.parametrize("how", sorted(KEEPERS))
def test_a_write_into_a_tensor_a_helper_kept_is_no_safe_rewrite(how):
    source = _keeper(*KEEPERS[how])
    found = [f for f in _process(source, Settings()).findings if "*=" in f.message]
    assert found and all(f.status is None or f.status.value != "safe" for f in found), found
    rewritten = source.replace("y *= 3", "y = y * 3")
    assert any(not torch.equal(a, b) for a, b in zip(_run(source), _run(rewritten)))  # what the helper kept
    result = _process(source, Settings(), fix=True)
    fixed = result.fixed if result.changed else source
    assert all(torch.equal(a, b) for a, b in zip(_run(fixed), _run(source)))


def test_a_helper_that_only_reads_its_argument_keeps_the_safe_rewrite():
    source = _keeper(*READER)
    found = [f for f in _process(source, Settings()).findings if "*=" in f.message]
    assert found and found[0].status is not None and found[0].status.value == "safe", found
    result = _process(source, Settings(), fix=True)
    assert result.changed and "y = y * 3" in result.fixed
    assert all(torch.equal(a, b) for a, b in zip(_run(result.fixed), _run(source)))
