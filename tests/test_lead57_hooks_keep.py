"""Stop 57 (lead, from safe57's report): a forward hook of the file that keeps what a module's
call sees makes the call's result (and its arguments) held elsewhere, so a write into them gets no
safe fix: the rewrite ``h = h + 1`` would hide the write from the hook (the program works, and what
the hook kept differs). Found by safe57 (its scratch tests, written first: they failed on s57int
before ``kept._torch_call`` asked ``hooks_may_keep`` for a module's call). A hook that keeps nothing
(reads the shape, makes the output require grad) leaves the fix safe."""

from __future__ import annotations

import pytest
import torch

from codemod.config import Settings
from tests.programs import fixed_source, process_in_project, run_program

ALL = Settings(select=("ALL",))


def _verdicts(source: str, write: str) -> list:
    line = source.splitlines().index(write.rstrip("\n")) + 1
    return [(f.status.value if f.status else None, f.reason)
            for f in process_in_project(source, ALL).findings if f.span.line == line]


def _seen_after_forward(source: str) -> list:
    """What the hook kept after one forward, no backward."""
    namespace: dict = {}
    exec(compile(source, "<program>", "exec"), namespace)
    return namespace["main"](backward=False)


# ---- a hole closed: a forward hook keeping what a module's call returns ----------------------

HOOKED = """\
import torch
import torch.nn as nn

SEEN = []


def keep(module, inputs, output):
    BODY


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.gate = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        y = torch.sigmoid(self.gate(x))
        h += 1
        return h * y


def main(backward=True):
    torch.manual_seed(0)
    net = Net()
    REGISTER
    out = net(torch.randn(3, 4))
    held = [t.detach().clone() for t in SEEN]
    if not backward:
        return held
    out.sum().backward()
    return [out.detach(), *[p.grad for p in net.parameters()], *held]
"""
WRITE = "        h += 1\n"
REWRITTEN = "        h = h + 1\n"

KEEPING = {
    "appends-the-output": ("SEEN.append(output)", "net.fc.register_forward_hook(keep)"),
    "stores-a-detached-view": ("SEEN.append(output.detach())", "net.fc.register_forward_hook(keep)"),
    "on-every-module": ("SEEN.append(output)", "for m in net.modules():\n        m.register_forward_hook(keep)"),
    "a-lambda": ("pass", "net.fc.register_forward_hook(lambda m, i, o: SEEN.append(o))"),
    "global-hook": ("SEEN.append(output)", "nn.modules.module.register_module_forward_hook(keep)"),
}


@pytest.mark.parametrize("name", sorted(KEEPING))
def test_a_module_whose_forward_hook_keeps_its_output_stays_unsafe(name):
    body, register = KEEPING[name]
    source = HOOKED.replace("BODY", body).replace("REGISTER", register)
    verdicts = _verdicts(source, WRITE)
    assert verdicts and all(status != "safe" for status, _ in verdicts), verdicts
    assert REWRITTEN not in fixed_source(source, ALL, project=True)


def test_the_rewrite_would_hide_the_write_from_the_hook():
    """What the look-alike guards: the program works (no backward error), and the rewrite changes
    what the hook kept."""
    body, register = KEEPING["appends-the-output"]
    source = HOOKED.replace("BODY", body).replace("REGISTER", register)
    run_program(source)  # a working program
    before, after = _seen_after_forward(source), _seen_after_forward(source.replace(WRITE, REWRITTEN))
    assert before and not torch.equal(before[0], after[0])


def test_a_hook_keeping_the_input_makes_the_argument_held():
    """``y = self.fc(h); h += 1``: the hook keeps ``inputs[0]``, the tensor ``h`` holds."""
    source = HOOKED.replace("BODY", "SEEN.append(inputs[0])").replace(
        "REGISTER", "net.gate.register_forward_hook(keep)").replace(
        "        h = self.fc(x)\n        y = torch.sigmoid(self.gate(x))\n",
        "        h = x * 2\n        y = torch.sigmoid(self.gate(h))\n")
    verdicts = _verdicts(source, WRITE)
    assert verdicts and all(status != "safe" for status, _ in verdicts), verdicts


@pytest.mark.parametrize("body", ["SHAPES.append(output.shape)", "output.requires_grad_(True)"])
def test_a_hook_keeping_nothing_leaves_the_fix_safe(body):
    """The control: a hook that reads only the output's shape, or makes it require grad."""
    source = HOOKED.replace("SEEN = []\n", "SEEN = []\nSHAPES = []\n").replace("BODY", body).replace(
        "REGISTER", "net.fc.register_forward_hook(keep)")
    assert _verdicts(source, WRITE) == [("safe", None)]
    fixed = fixed_source(source, ALL, project=True)
    assert REWRITTEN in fixed
    got, want = run_program(fixed), run_program(source.replace(WRITE, REWRITTEN))
    assert len(got) == len(want) and all(torch.equal(g, w) for g, w in zip(got, want))


