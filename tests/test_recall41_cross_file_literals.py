"""Constructor arguments another file of the run passes as literals (issue 24, stop 41).

``Block(4, act="Tanh")`` or ``Block(4, inplace=False)`` in ``train.py`` decides what ``Block``'s
parameters hold in ``blocks.py`` (``CallFact.args_values``, read by ``Chains._param_values``), as
a construction in the same file does: an activation chosen by that name is proven to save its
result, a dropout turned off is no hazard. A name, an expression or a spread passed there leaves
the parameter unknown. Each program is new (no corpus case); each original dies in backward where
the fact is proven, and each look-alike runs.
"""

from __future__ import annotations

import pytest

from tests.test_recall39_callers import _findings, _gradients, _line, _project

BLOCKS = """\
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, c, act="GELU", inplace=False):
        super().__init__()
        self.fc = nn.Linear(c, c)
        self.act = getattr(nn, act)()
        self.drop = nn.Dropout(0.5, inplace=inplace)

    def forward(self, x):
        out = self.act(self.fc(x))
        out += x
        return self.drop(out)
"""

TRAIN = """\
import torch
from blocks import Block


def compute():
    torch.manual_seed(0)
    name = "GELU"
    net = Block({passed})
    net(torch.randn(3, 4)).sum().backward()
    return [p.grad.tolist() for p in net.parameters()]
"""


def _run(tmp_path, passed: str):
    _project(tmp_path, {"blocks.py": BLOCKS, "train.py": TRAIN.replace("{passed}", passed)})
    found = [f for f in _findings(tmp_path, ["blocks.py", "train.py"]) if f[2].startswith("IPF1")]
    return found, _gradients(tmp_path, "train")


def test_a_name_another_file_passes_picks_the_activation(tmp_path):
    found, result = _run(tmp_path, '4, act="Tanh"')
    assert result is None  # Tanh saved its result; `out += x` wrote into it
    assert [(f[0], f[1], f[2]) for f in found] == [("blocks.py", _line(tmp_path, "blocks.py", "out += x"), "IPF101")]


@pytest.mark.parametrize("passed", ['4, act="GELU"', "4, act=name", "4, **{'act': 'GELU'}", "4"],
                         ids=["gelu", "a-name", "spread", "default"])
def test_what_another_file_passes_proves_nothing_it_does_not_show(tmp_path, passed):
    found, result = _run(tmp_path, passed)
    assert result is not None  # it runs: GELU saves its input
    assert found == []


def test_a_literal_false_in_another_file_turns_the_dropout_off(tmp_path):
    """``nn.Dropout(0.5, inplace=inplace)`` after an activation that saved its result: reported
    (a dynamic flag) while any construction may pass ``True``; not where the only one, in
    another file, passes ``False``."""
    blocks = BLOCKS.replace('act="GELU"', 'act="ReLU"').replace("        out += x\n", "")
    for passed, reported in (("4, inplace=True", True), ("4, inplace=False", False)):
        _project(tmp_path, {"blocks.py": blocks, "train.py": TRAIN.replace("{passed}", passed)})
        found = [f for f in _findings(tmp_path, ["blocks.py", "train.py"]) if f[2].startswith("IPF1")]
        assert (_gradients(tmp_path, "train") is None) is reported
        assert [(f[0], f[2]) for f in found] == ([("blocks.py", "IPF102")] if reported else [])


def test_a_literal_changed_in_another_file_is_a_cache_miss(tmp_path):
    """The result cache keys ``blocks.py`` by what the other files' constructions pass (the
    digest of its class's sites): ``act="Tanh"`` changed to ``act="GELU"`` in ``train.py`` is a
    miss, and the reused result equals a fresh one."""
    from codemod.config import Settings
    from codemod.engine.files import process_path
    from codemod.engine.project import build_index

    blocks, train = tmp_path / "blocks.py", tmp_path / "train.py"
    blocks.write_text(BLOCKS)
    files, cache = [str(blocks), str(train)], str(tmp_path / "cache")

    def check(cache_dir):
        result = process_path(str(blocks), Settings(select=("IPF1",)), False, False, False, cache_dir,
                              build_index(files, cache_dir))
        return sorted((f.code, f.span.line) for f in result.findings)

    train.write_text(TRAIN.replace("{passed}", '4, act="Tanh"'))
    assert check(cache) == check(None) != []  # the label: Tanh saves its result
    train.write_text(TRAIN.replace("{passed}", '4, act="GELU"'))
    assert check(None) == [] == check(cache)
