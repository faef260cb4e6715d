"""Issue 24 (default `fix`, kept54): what a call of code the analysis cannot see returns may be
kept by that code, so a write into it is no safe fix.

`out = self.block(x); out += r` writes into what `self.block` returned. Where the block is a
module class of another file (`from keeper import Keeper`, the project index not told that file
keeps nothing) or a module handed in through the constructor (`self.block = block`), the block
may keep that tensor (`self.last = y; return y`): `out = out + r` leaves the kept one without the
write, a changed program. Until kept54 a callee the analysis could not find counted as keeping
nothing (as a torch op does). Now only torch's ops and modules (the kind model's modules),
tensor methods and builtins that keep nothing are trusted; an unseen callee is kept
("held-elsewhere", unsafe tier). Controls stay safe: a torch module attribute (`nn.Sigmoid()`,
`nn.Sequential` of torch layers), `torch.sigmoid`, `F.relu`, a tensor method.
"""

from __future__ import annotations

import pathlib
import sys
import tempfile

import pytest
import torch

from codemod.config import Settings
from codemod.engine.pipeline import process_source
from codemod.engine.project import build_index
from tests.programs import OTHER_FILE

KEEPER = """\
import torch
import torch.nn as nn


class Keeper(nn.Module):
    def forward(self, x):
        y = torch.sigmoid(x)
        self.last = y
        return y
"""

IMPORTED = """\
import torch
import torch.nn as nn
import torch.nn.functional as F
from keeper import Keeper


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Keeper()

    def forward(self, x, r):
        out = self.block(x)
        g = torch.sin(out)
        out += r
        return out + g


def make():
    return Block()
"""

HANDED = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, block):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(4))
        self.block = block

    def forward(self, x, r):
        out = self.block(x * self.scale)
        g = torch.sin(out)
        out += r
        return out + g
"""

WRITE = "        out += r\n"
REWRITTEN = "        out = out + r\n"

# Torch's own callees: what they return no one else keeps; the fix stays in the safe tier.
CONTROLS = {
    "module attribute": ("self.block = nn.Sigmoid()", "out = self.block(x)"),
    "sequential of torch layers": ("self.block = nn.Sequential(nn.Linear(4, 4), nn.Sigmoid())", "out = self.block(x)"),
    "torch op": ("self.block = None", "out = torch.sigmoid(x)"),
    "functional": ("self.block = None", "out = F.relu(x)"),
    "tensor method": ("self.block = None", "out = x.sigmoid()"),
}


def _project(tmp: str, case: str) -> dict:
    files = {"case.py": case, "keeper.py": KEEPER}
    for name, text in files.items():
        pathlib.Path(tmp, name).write_text(text)
    return files


def _process(case: str, fix: bool):
    with tempfile.TemporaryDirectory() as tmp:
        _project(tmp, case)
        pathlib.Path(tmp, "other.py").write_text(OTHER_FILE)
        # keeper.py is no file of the run (a library's, or left out): its code is unseen
        index = build_index([str(pathlib.Path(tmp, n)) for n in ("case.py", "other.py")])
        result = process_source(case.encode(), str(pathlib.Path(tmp, "case.py")), Settings(), fix=fix,
                                project=index, module_name="case")
    assert result.error is None, result.error
    return result


def _verdicts(case: str):
    return [(f.status.value if f.status else None, f.reason) for f in _process(case, False).findings
            if "out += r" in f.message or "`out`" in f.message]


def _fixed(case: str) -> str:
    result = _process(case, True)
    return result.fixed if result.changed else case


def _run(case: str):
    """Build the block (with the project's `keeper.py` importable), run forward, return the
    output and what the keeper kept."""
    with tempfile.TemporaryDirectory() as tmp:
        _project(tmp, case)
        sys.path.insert(0, tmp)
        try:
            sys.modules.pop("keeper", None)
            space: dict = {"__name__": "case"}
            exec(compile(case, "case.py", "exec"), space)
            torch.manual_seed(0)
            if "make" in space:
                net = space["make"]()
            else:
                from keeper import Keeper
                net = space["Block"](Keeper())
            x, r = torch.randn(3, 4), torch.randn(3, 4)
            out = net(x, r)
            return out.detach().clone(), net.block.last.detach().clone()
        finally:
            sys.path.remove(tmp)
            sys.modules.pop("keeper", None)


@pytest.mark.parametrize("case", [IMPORTED, HANDED], ids=["another-file-class", "constructor-parameter"])
def test_an_unseen_callee_that_keeps_its_result_is_not_a_safe_fix(case):
    verdicts = _verdicts(case)
    assert verdicts and all(status != "safe" for status, _ in verdicts), verdicts
    assert REWRITTEN not in _fixed(case)
    # What the safe rewrite would have done: the kept tensor loses the write.
    out, kept = _run(case)
    out2, kept2 = _run(case.replace(WRITE, REWRITTEN))
    assert torch.equal(out, out2) and not torch.equal(kept, kept2)


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_torch_callees_keep_nothing_and_the_fix_stays_safe(name):
    init, call = CONTROLS[name]
    case = IMPORTED.replace("self.block = Keeper()", init).replace("out = self.block(x)", call)
    assert ("safe", None) in _verdicts(case)
    assert REWRITTEN in _fixed(case)


# A class of the file that inherits torch's `forward` (transformers' `EsmFoldLinear(nn.Linear)`,
# only an `__init__`): calling it runs `nn.Linear.forward`, which keeps nothing.
INHERITED = '''\


class GatedLinear(nn.Linear):
    def __init__(self, d):
        super().__init__(d, d)
        with torch.no_grad():
            self.weight.fill_(0.5)
'''
HOOKED = '''\


class GatedLinear(nn.Linear):
    def __init__(self, d):
        super().__init__(d, d)
        self.register_forward_hook(lambda m, i, o: setattr(m, "last", o))
'''


def _inherited(cls: str) -> str:
    return IMPORTED.replace("from keeper import Keeper\n", "").replace(
        "\n\nclass Block(", cls + "\n\nclass Block(").replace("self.block = Keeper()", "self.block = GatedLinear(4)")


def test_a_file_class_that_inherits_a_torch_forward_keeps_nothing():
    case = _inherited(INHERITED)
    assert ("safe", None) in _verdicts(case)
    assert REWRITTEN in _fixed(case)


def test_a_file_class_that_registers_a_hook_may_keep_its_result():
    """The hook keeps the output (`m.last = o`): the rewrite would leave it without the write."""
    case = _inherited(HOOKED)
    verdicts = _verdicts(case)
    assert verdicts and all(status != "safe" for status, _ in verdicts), verdicts
    assert REWRITTEN not in _fixed(case)
    out, kept = _run(case)
    out2, kept2 = _run(case.replace(WRITE, REWRITTEN))
    assert torch.equal(out, out2) and not torch.equal(kept, kept2)
