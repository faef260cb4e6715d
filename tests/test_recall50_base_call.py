"""``block(h)`` runs ``Block.forward`` only where no ``__call__`` of ``Block`` or of a base class
stands in front of ``nn.Module``'s. ``Calls.bound_runs`` looked only into ``Block``'s own body,
so a base class's ``__call__`` (in another file of the run, or in the same file) that never runs
``forward`` still let another file's ``blk(h)`` prove ``forward``'s write into ``h`` (stop 49).
Each program is run with torch: the look-alikes run through, the plain base dies in backward."""

from __future__ import annotations

import pytest

from tests.test_recall39_callers import _findings, _gradients, _line, _project

pytest.importorskip("torch")

QUIET = """\
    import torch.nn as nn


    class Quiet(nn.Module):
        {body}
"""

BLOCK = """\
    {imports}


    class Block(Quiet):
        def forward(self, x):
            x.mul_(2)
            return x
"""

MODEL = """\
    import torch
    from block import Block


    def compute():
        blk = Block()
        a = torch.ones(3, requires_grad=True)
        h = a.sigmoid()
        out = blk(h)
        (out.sum() + h.sum()).backward()
        return [float(v) for v in a.grad]
"""

_CALL = "def __call__(self, x):\n            return x * 2"  # never runs forward
_PLAIN = "def extra(self):\n            return 0"


def _proven(tmp_path) -> list:
    at = _line(tmp_path, "block.py", "x.mul_(2)")
    return [f for f in _findings(tmp_path, ["model.py", "block.py", "base.py"])
            if f[:2] == ("block.py", at) and f[2].startswith("IPF1")]


def _write(tmp_path, quiet_body: str, same_file: bool) -> None:
    quiet = QUIET.replace("{body}", quiet_body)
    block = BLOCK.replace("{imports}", "from base import Quiet")
    if same_file:
        block = quiet + BLOCK.replace("{imports}", "")
    _project(tmp_path, {"base.py": quiet if not same_file else "X = 1\n", "block.py": block, "model.py": MODEL})


@pytest.mark.parametrize("same_file", [False, True], ids=["base-in-another-file", "base-in-the-file"])
def test_a_base_class_call_that_skips_forward_proves_nothing(tmp_path, same_file):
    _write(tmp_path, _CALL, same_file)
    assert _gradients(tmp_path) is not None  # runs: `blk(h)` never ran forward
    assert _proven(tmp_path) == []


@pytest.mark.parametrize("same_file", [False, True], ids=["base-in-another-file", "base-in-the-file"])
def test_a_plain_base_class_still_lets_the_call_run_forward(tmp_path, same_file):
    _write(tmp_path, _PLAIN, same_file)
    assert _gradients(tmp_path) is None  # sigmoid saved `h`; forward bumped its version
    assert _proven(tmp_path), _findings(tmp_path, ["model.py", "block.py", "base.py"])
