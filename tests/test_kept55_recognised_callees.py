"""Issue 24 (default `fix`, kept55): a callee the safe tier cannot see may keep what it returns
(kept54), but what the analysis already resolves for its save facts is seen: one answer to
"what may this callee be".

`out = self.act(self.fc(x)); out += r` is rewritten `out = out + r` (safe tier) only where every
callee `self.act` may be keeps nothing of what it returns. The same resolution that says what
the layer saves (recall41/42/45) says what it is: a module every construction of the class passes
for its constructor's parameter (`Block(nn.Sigmoid())`, `Block(torch.tanh)`), a construction by
name (`getattr(nn, name)()`), a torch module's method handing the module back
(`nn.Sigmoid().float()`), an identity (`typing.cast(T, h)`: the inner call decides). Each is a
torch module or function: safe, and the rewritten program matches the reference. Where one
possibility keeps its result (a module of the file storing `self.last = y`, one construction of
several passing it, a constructor argument from a caller the file does not show) the fix stays
unsafe (`held-elsewhere`), and the rewrite would indeed leave the kept tensor without the write.
"""

from __future__ import annotations

import pytest
import torch

from codemod.config import Settings
from tests.programs import fixed_source, process_in_project, run_program

PROGRAM = """\
import typing

import torch
import torch.nn as nn


class Keeper(nn.Module):
    def forward(self, x):
        y = torch.sigmoid(x)
        self.last = y
        return y


class Block(nn.Module):
    def __init__(self, act, name="Sigmoid"):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = BUILD

    def forward(self, x, r):
        out = CALL
        g = torch.sin(out)
        out += r
        return out + g


def main(backward=True):
    torch.manual_seed(0)
    MORE
    net = Block(PASSED)
    x, r = torch.randn(3, 4), torch.randn(3, 4)
    out = net(x, r)
    kept = [m.last.detach().clone() for m in net.modules() if hasattr(m, "last")]
    if not backward:
        return kept
    out.sum().backward()
    return [out.detach(), *[p.grad for p in net.parameters()], *kept]
"""

WRITE = "        out += r\n"
REWRITTEN = "        out = out + r\n"
DEFAULT_CALL = "self.act(self.fc(x))"


def _program(build: str, passed: str, call: str = DEFAULT_CALL, more: str = "") -> str:
    return (PROGRAM.replace("BUILD", build).replace("PASSED", passed).replace("CALL", call)
            .replace("    MORE\n", more))


def _verdicts(source: str) -> list:
    line = source.splitlines().index(WRITE.rstrip("\n")) + 1
    return [(f.status.value if f.status else None, f.reason)
            for f in process_in_project(source, Settings()).findings if f.span.line == line]


# Every value the callee may be is torch's: the fix is safe, and it gives the reference program.
RECOGNISED = {
    "module-handed-in": ("act", "nn.Sigmoid()", DEFAULT_CALL),
    "torch-function-handed-in": ("act", "torch.tanh", DEFAULT_CALL),
    "two-constructions-both-torch": ("act", "nn.Tanh()", DEFAULT_CALL),  # + Block(nn.Sigmoid()) below
    "module-method-hands-it-back": ("nn.Sigmoid().float()", "None", DEFAULT_CALL),
    "getattr-by-name": ("getattr(nn, name)()", "None", DEFAULT_CALL),
    "cast-of-a-torch-op": ("act", "None", "typing.cast(torch.Tensor, torch.sigmoid(self.fc(x)))"),
}


@pytest.mark.parametrize("name", sorted(RECOGNISED))
def test_a_callee_resolved_to_torch_keeps_nothing_and_the_fix_is_safe(name):
    build, passed, call = RECOGNISED[name]
    more = "    Block(nn.Sigmoid())\n" if name.startswith("two-") else ""
    source = _program(build, passed, call, more)
    assert _verdicts(source) == [("safe", None)], _verdicts(source)
    fixed = fixed_source(source, project=True)
    assert REWRITTEN in fixed
    got, want = run_program(fixed), run_program(source.replace(WRITE, REWRITTEN))
    assert len(got) == len(want) and all(torch.equal(g, w) for g, w in zip(got, want))


# One possibility keeps what it returns (or is not seen): the fix stays unsafe.
KEPT = {
    "keeper-handed-in": ("act", "Keeper()", DEFAULT_CALL, ""),
    "one-of-two-constructions-keeps": ("act", "Keeper()", DEFAULT_CALL, "    Block(nn.Sigmoid())\n"),
    "keeper-method-hands-it-back": ("Keeper().float()", "None", DEFAULT_CALL, ""),
    "cast-of-a-keeping-call": ("Keeper()", "None", "typing.cast(torch.Tensor, self.act(self.fc(x)))", ""),
}


@pytest.mark.parametrize("name", sorted(KEPT))
def test_a_callee_that_may_keep_its_result_stays_unsafe(name):
    build, passed, call, more = KEPT[name]
    source = _program(build, passed, call, more)
    verdicts = _verdicts(source)
    assert verdicts and all(status == "unsafe" for status, _ in verdicts), verdicts
    assert REWRITTEN not in fixed_source(source, project=True)
    # the rewrite would leave the kept tensor without the write
    kept, kept2 = _forward_kept(source), _forward_kept(source.replace(WRITE, REWRITTEN))
    assert kept and not all(torch.equal(a, b) for a, b in zip(kept, kept2))


def _forward_kept(source: str) -> list:
    space: dict = {"__name__": "case"}
    exec(compile(source, "case.py", "exec"), space)
    return space["main"](backward=False)


@pytest.mark.parametrize("caller", [
    "def build(a):\n    return Block(a)\n",  # handed on from a parameter nothing here calls: unseen
    "def build(config):\n    return Block(config['act'])\n",  # read from a configuration
])
def test_a_constructor_argument_the_file_does_not_show_may_keep(caller):
    source = _program("act", "nn.Sigmoid()") + "\n\n" + caller
    verdicts = _verdicts(source)
    assert verdicts and all(status == "unsafe" for status, _ in verdicts), verdicts


def test_a_name_that_may_pick_a_module_not_torch_may_keep():
    """``getattr(mylib, name)()``: a library's class, not seen."""
    source = _program("getattr(mylib, name)()", "None").replace("import typing\n", "import typing\n\nimport mylib\n")
    verdicts = _verdicts(source)
    assert verdicts and all(status == "unsafe" for status, _ in verdicts), verdicts
