"""Family A: an ``inplace=True`` activation built from a class parameter (issue 24, stop 40).

The builders of timm, torchvision and mmcv take the activation as a class, ``act_layer=nn.ReLU``,
and build it as ``self.act = act_layer(inplace=True)``. What runs is the torch module every
construction of the class in the file passes for ``act_layer``, or the default where none passes
one (``Chains._param_values``, as for ``inplace=inplace``): a construction passing anything else
(a class of the project, a ``partial``), or one the file cannot see (another file of the run
builds the class), leaves it unknown, never a guess. Each program is new (no corpus case); each
original dies in backward where the fact is proven, and each look-alike runs.
"""

from __future__ import annotations

import textwrap

import pytest
import torch

from codemod.config import Settings
from tests.programs import changed_by_fix, process_in_project, raises_inplace, run_program

BLOCK = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class SafeAct(nn.Module):
        def __init__(self, inplace=False):
            super().__init__()

        def forward(self, x):
            return x * 2


    class Block(nn.Module):
        def __init__(self, c, act_layer=nn.ReLU):
            super().__init__()
            self.fc = nn.Linear(c, c)
            self.bn = nn.BatchNorm1d(c)
            self.act = act_layer(inplace=True)

        def forward(self, x):
            h = {before}
            return self.act(h)


    def main():
        net = Block(4{passed})
        out = net(torch.randn(3, 4))
        out.sum().backward()
        return [p.grad for p in net.parameters()]
""")


def _block(before: str = "torch.sigmoid(self.fc(x))", passed: str = "") -> str:
    return BLOCK.replace("{before}", before).replace("{passed}", passed)


def _proven(source: str) -> list:
    return [f for f in process_in_project(source, Settings()).findings if f.code.startswith("IPF1")]


@pytest.mark.parametrize("passed", ["", ", act_layer=nn.SiLU", ", nn.ReLU"], ids=["default", "passed", "positional"])
def test_an_activation_class_parameter_is_the_module_it_builds(passed):
    source = _block(passed=passed)
    assert raises_inplace(source)  # sigmoid saved its result; the activation wrote into it
    found = _proven(source)
    built = source.splitlines().index("        self.act = act_layer(inplace=True)") + 1
    assert [(f.code, f.span.line) for f in found] == [("IPF102", built)], found
    fixed = changed_by_fix(source)
    assert "act_layer(inplace=False)" in fixed
    got = run_program(fixed)
    want = run_program(source.replace("act_layer(inplace=True)", "act_layer()"))
    assert len(got) == len(want) and any(w is not None for w in want)
    assert all(g is w is None or torch.equal(g, w) for g, w in zip(got, want))  # (the unused norm: None)


@pytest.mark.parametrize("before, passed", [
    ("self.bn(self.fc(x))", ""),  # batch norm saves its input, not its output
    ("torch.sigmoid(self.fc(x))", ", act_layer=SafeAct"),  # a class of the project: not a torch module
    ("torch.sigmoid(self.fc(x))", ", act_layer=nn.Tanh if False else SafeAct"),  # not a name of one class
], ids=["after-batch-norm", "project-class", "conditional"])
def test_look_alikes_stay_silent(before, passed):
    source = _block(before, passed)
    run_program(source)  # works
    assert _proven(source) == []


def test_a_construction_in_another_file_leaves_the_class_unknown(tmp_path):
    """The file builds no ``Block``; another file of the run builds it with its own class."""
    import subprocess
    import sys

    (tmp_path / "blocks.py").write_text(_block().split("\n\ndef main")[0] + "\n")
    (tmp_path / "train.py").write_text(textwrap.dedent("""\
        import torch
        from blocks import Block, SafeAct


        def main():
            net = Block(4, act_layer=SafeAct)
            net(torch.randn(3, 4)).sum().backward()
    """))
    run = subprocess.run([sys.executable, "-c", "import train; train.main()"], cwd=tmp_path,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    check = subprocess.run([sys.executable, "-m", "codemod", "check", "--no-cache", "blocks.py", "train.py"],
                           cwd=tmp_path, capture_output=True, text=True)
    assert "IPF1" not in check.stdout, check.stdout


def test_a_chain_built_with_the_class_parameter_knows_what_feeds_the_dropout():
    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Head(nn.Sequential):
            def __init__(self, c, act_layer=nn.ReLU, p=0.5):
                layers = [nn.Linear(c, c), act_layer(inplace=True), nn.Dropout(p, inplace=True), nn.Linear(c, 1)]
                super().__init__(*layers)


        def main():
            head = Head(4)
            head(torch.randn(3, 4)).sum().backward()
            return [q.grad for q in head.parameters()]
    """)
    assert raises_inplace(source)  # the in-place dropout wrote into the ReLU's saved result
    found = _proven(source)
    assert any(f.code == "IPF102" and "Dropout" in f.message for f in found), found
