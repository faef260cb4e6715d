"""``repair`` where one call line holds several conflicts, or one tensor is written by several
lines (issue 23, group 1: the candidate list and the order fixes are taken in). Each program is
written from a public report's shape, not copied from a corpus case:

- a stacked encoder built as one ``nn.Sequential`` whose layers each put an in-place activation
  (``nn.ELU(inplace=True)``) after a ``nn.Sigmoid`` that saved its output: one conflict per
  layer, all at the same call line (``self.net(x)``), each with its own constructor line. Fixing
  the first layer's module reveals the second's conflict, a *different* one, which must not be
  taken for "the fix left its conflict in place";
- a ``tanh`` feature shifted in place (``h -= self.shift``) and then given to a pre-activation
  residual block (He et al., "Identity Mappings in Deep Residual Networks"; torchvision-style
  ``self.relu = nn.ReLU(inplace=True)`` applied to the block's input, whose skip then reads the
  activated input). Both writes modify the tensor ``tanh`` saved; only the first needs a fix:
  written out of place, it hands the block a fresh tensor. Turning the block's ``inplace`` off
  would change what its skip adds (a wrong candidate, NOT verified).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.repair import render, repair  # noqa: E402
from codemod.runtime.verify import verify  # noqa: E402

ENCODER = '''\
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(6, 5),
            nn.Sigmoid(),
            nn.ELU(inplace=True),
            nn.Linear(5, 4),
            nn.Sigmoid(),
            nn.ELU(inplace=True),
            nn.Linear(4, 3),
        )

    def forward(self, x):
        return self.net(x)


def compute():
    torch.manual_seed(0)
    m = Encoder()
    m(torch.randn(3, 6)).pow(2).sum().backward()
    return {n: p.grad for n, p in m.named_parameters()}
'''

# The working look-alike: no Sigmoid saved what the in-place ELUs write (a Linear saves its input only).
ENCODER_WORKING = ENCODER.replace("            nn.Sigmoid(),\n", "")

PREACT = '''\
import torch
import torch.nn as nn


class PreActBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.relu = nn.ReLU(inplace=True)
        self.fc = nn.Linear(c, c)

    def forward(self, x):
        out = self.fc(self.relu(x))
        return out + x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(4, 4)
        self.shift = 0.3
        self.block = PreActBlock(4)

    def forward(self, x):
        h = torch.tanh(self.embed(x))
        h -= self.shift
        return self.block(h)


def compute():
    torch.manual_seed(0)
    m = Net()
    m(torch.randn(5, 4)).pow(2).sum().backward()
    return {n: p.grad for n, p in m.named_parameters()}
'''


def test_one_call_line_with_several_inplace_modules_fixes_each_where_it_was_built(tmp_path):
    path = tmp_path / "encoder.py"
    path.write_text(ENCODER)
    result = repair(f"{path}::compute", devices=["cpu"])
    assert result.verified, render(result)
    assert result.repaired == ENCODER.replace("nn.ELU(inplace=True)", "nn.ELU(inplace=False)"), render(result)
    assert not any("still there" in step.action for step in result.steps), render(result)


def test_inplace_modules_after_ops_that_save_nothing_are_left_alone(tmp_path):
    path = tmp_path / "encoder_ok.py"
    path.write_text(ENCODER_WORKING)
    result = repair(f"{path}::compute", devices=["cpu"])
    assert result.nothing_to_do, render(result)
    assert result.repaired == ENCODER_WORKING


def test_a_later_write_into_a_tensor_an_earlier_write_already_changed_waits_for_that_fix(tmp_path):
    path = tmp_path / "preact.py"
    path.write_text(PREACT)
    result = repair(f"{path}::compute", devices=["cpu"])
    assert result.verified, render(result)
    assert result.repaired == PREACT.replace("h -= self.shift", "h = h - self.shift"), render(result)


def test_turning_off_the_blocks_inplace_flag_changes_what_its_skip_adds_and_does_not_verify(tmp_path):
    path = tmp_path / "preact_wrong.py"
    path.write_text(PREACT)
    wrong = PREACT.replace("h -= self.shift", "h = h - self.shift").replace("nn.ReLU(inplace=True)", "nn.ReLU()")
    result = verify(f"{path}::compute", rewritten_source=wrong, devices=["cpu"])
    assert not result.verified


def test_only_a_write_on_another_line_into_the_same_saved_tensor_waits():
    from codemod.runtime.locate import Conflict, Site
    from codemod.runtime.repair import after_earlier_write

    def conflict(write_line, version_now, save_line=5):
        return Conflict("saved-then-modified", Site("m.py", write_line, "w"), "add_",
                        save=Site("m.py", save_line, "s", column=4), save_op="tanh", saved_as="output",
                        shape=(2, 3), version_saved=0, version_now=version_now)

    first, again, later, other_tensor = conflict(7, 1), conflict(7, 2), conflict(9, 3), conflict(9, 1, save_line=6)
    assert after_earlier_write([later, first, again, other_tensor]) == [later]
    assert after_earlier_write([later]) == []


def test_script_repair_also_waits_for_the_first_write(tmp_path):
    """``repair script.py`` takes the same order as ``repair FILE::TARGET``: the first write of
    the tensor ``tanh`` saved is fixed first, and the block's in-place ReLU (a later write into
    it) is left as it is once the next run no longer sees it: turning its flag off would change
    what the skip adds (the test above), and a suggestion that did both would not verify."""
    from codemod.runtime.script import Script
    from codemod.runtime.script_repair import Verdict, render as render_script, repair_script

    path = tmp_path / "preact_script.py"
    path.write_text(PREACT + '\n\nif __name__ == "__main__":\n    compute()\n')
    result = repair_script(Script(path=str(path), cwd=str(tmp_path)), max_backward=1, timeout=120)
    repaired = result.repaired.get(str(path.resolve()), "")
    assert "h = h - self.shift" in repaired and "nn.ReLU(inplace=True)" in repaired, render_script(result)
    assert result.verdict is Verdict.verified, render_script(result)
