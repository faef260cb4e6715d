"""Family A across files: a block of another file of the run, called in ``forward``.

``A, B = blocks.A, blocks.B`` (after ``blocks = import_module("blocks")`` or ``import blocks``)
binds the names as ``from blocks import A, B`` does, and the project index now says of a class
whether its own file sees it own parameters (what its instances return then requires grad) and
keep nothing of what it returns (the out-of-place rewrite then hides the write from no one).
With those facts, a write into what such a block returned after its last op saved it (a
sigmoid) is a proven hazard with a safe fix, as it is where the class sits in the same file.
Negative controls: a block whose last op saves nothing of its output, a block that keeps
its result, a name rebound later.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

BLOCKS = """\
import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return torch.sigmoid(self.fc(x))


class Plain(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return self.fc(x)


class Keeping(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.last = None

    def forward(self, x):
        out = torch.sigmoid(self.fc(x))
        self.last = out
        return out
"""

# `{load}` binds `blocks`; `{names}` binds the classes from it; `{block}` is the one called.
MODEL = """\
import torch
import torch.nn as nn
{load}
{names}


class Net(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.block = {block}(d)
        self.head = nn.Linear(d, 1)

    def forward(self, x):
        h = self.block(x)
        h *= 2.0
        return self.head(h)


def compute():
    torch.manual_seed(0)
    net = Net(3)
    net(torch.randn(4, 3)).sum().backward()
    return [p.grad.flatten().tolist() for p in net.parameters() if p.grad is not None]
"""

DYNAMIC = 'from importlib import import_module\n\nblocks = import_module("blocks")'
ALIASES = "Gate, Plain, Keeping = blocks.Gate, blocks.Plain, blocks.Keeping"


def _write(tmp_path, block: str, load: str = DYNAMIC, names: str = ALIASES) -> None:
    (tmp_path / "blocks.py").write_text(BLOCKS)
    (tmp_path / "model.py").write_text(MODEL.format(load=load, names=names, block=block))


def _write_line(tmp_path) -> int:
    """The line of ``h *= 2.0`` in model.py (it moves with the import lines)."""
    return (tmp_path / "model.py").read_text().splitlines().index("        h *= 2.0") + 1


def _findings(tmp_path) -> list:
    run = subprocess.run([sys.executable, "-m", "codemod", "check", "--no-cache", "--select", "IPF1,IPF2",
                          "--output-format", "json", "model.py", "blocks.py"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode in (0, 1), run.stderr
    return sorted((f["filename"].rsplit("/", 1)[-1], f["location"]["row"], f["code"], f["status"])
                  for f in json.loads(run.stdout)["findings"])


def _fix(tmp_path) -> None:
    run = subprocess.run([sys.executable, "-m", "codemod", "fix", "--no-cache", "model.py", "blocks.py"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode in (0, 1), run.stderr


def _gradients(tmp_path):
    """The parameters' gradients after ``compute()`` in a fresh interpreter; None where backward
    raises the in-place error."""
    run = subprocess.run([sys.executable, "-c", "import json, model\n"
                          "try:\n    print(json.dumps(model.compute()))\n"
                          "except RuntimeError as e:\n"
                          "    assert 'modified by an inplace operation' in str(e), e\n    print('null')\n"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.mark.parametrize("load, names", [
    (DYNAMIC, ALIASES),
    ("import blocks", ALIASES),
    ("import blocks", "Gate = blocks.Gate"),
    ("", "from blocks import Gate"),
])
def test_a_write_into_what_an_imported_block_returned_is_proven_and_fixed(tmp_path, load, names):
    _write(tmp_path, "Gate", load, names)
    assert _findings(tmp_path) == [("model.py", _write_line(tmp_path), "IPF101", "safe")]
    assert _gradients(tmp_path) is None  # the original dies in backward
    want = MODEL.format(load=load, names=names, block="Gate").replace("h *= 2.0", "h = h * 2.0")
    (tmp_path / "want.py").write_text(want)
    _fix(tmp_path)
    assert "h = h * 2.0" in (tmp_path / "model.py").read_text()
    fixed = _gradients(tmp_path)
    (tmp_path / "model.py").write_text(want)
    assert fixed is not None and fixed == _gradients(tmp_path)


def test_an_in_place_dropout_on_what_an_imported_block_returned_is_proven(tmp_path):
    _write(tmp_path, "Gate")
    source = (tmp_path / "model.py").read_text()
    source = source.replace("        self.head = nn.Linear(d, 1)\n",
                            "        self.head = nn.Linear(d, 1)\n        self.drop = nn.Dropout(0.5, inplace=True)\n")
    source = source.replace("        h = self.block(x)\n        h *= 2.0\n", "        h = self.drop(self.block(x))\n")
    (tmp_path / "model.py").write_text(source)
    assert [(f, code, status) for f, _, code, status in _findings(tmp_path)] == [("model.py", "IPF102", "safe")]
    assert _gradients(tmp_path) is None


@pytest.mark.parametrize("block, want", [
    ("Plain", []),  # a linear layer saves its input, not its output: the write breaks nothing
    ("Keeping", [("IPF101", "unsafe")]),  # the block keeps its result: the rewrite would hide the write
])
def test_imported_look_alikes_stay_unproven_or_unsafe(tmp_path, block, want):
    _write(tmp_path, block)
    line = _write_line(tmp_path)
    assert [(code, status) for _, at, code, status in _findings(tmp_path) if at == line] == want
    if block == "Plain":
        assert _gradients(tmp_path) is not None  # it runs


def test_a_name_rebound_after_the_alias_is_not_taken_for_the_class(tmp_path):
    names = ALIASES + "\nif True:\n    Gate = blocks.Plain"
    _write(tmp_path, "Gate", names=names)
    assert [code for _, _, code, _ in _findings(tmp_path)] in ([], ["IPF201"])
    assert _gradients(tmp_path) is not None  # it runs: `Gate` is the plain block
