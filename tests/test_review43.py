"""Stop-43 review (rev43): defects found by reading stop 42's analysis code and the suppression
screen, each shown by a program run with torch before it was fixed."""

from __future__ import annotations

import pathlib
import textwrap

import pytest
import torch
from typer.testing import CliRunner

from codemod.engine.suppression import directives, suppressions
from codemod.frontends.cli import app

runner = CliRunner()

BODY = """\
import torch
def f(x):
    y = x.sigmoid()
    y += 1  {comment}
    return y
"""


def test_the_hazard_is_real():
    x = torch.randn(3, requires_grad=True)
    y = x.sigmoid()
    y += 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@pytest.mark.parametrize("comment", ["# NOQA: IPF101", "# NOQA", "# NoQa: ipf101", "# INPLACEFIX: ignore[IPF101]",
                                     "# Inplacefix: Ignore"])
def test_suppression_comments_in_any_case(tmp_path, monkeypatch, comment):
    """Ruff (a case-insensitive matcher) and flake8 (``re.IGNORECASE``) take ``# NOQA: CODE``; so
    does our comment pattern, but the cheap screen before it looked for lowercase words only, so
    a file whose only suppression was upper-case reported the finding anyway."""
    source = BODY.format(comment=comment)
    assert 4 in suppressions(source)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text(source)
    result = runner.invoke(app, ["check", "--no-cache", "m.py"])
    assert result.exit_code == 0, result.stdout


def test_file_level_comment_in_any_case():
    source = "# INPLACEFIX: NOQA: IPF101\n" + BODY.format(comment="")
    assert [d.lines.start for d in directives(source)] == [0]


def test_control_unsuppressed_still_reported(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text(BODY.format(comment="# NOQA: IPF104"))
    result = runner.invoke(app, ["check", "--no-cache", "m.py"])
    assert result.exit_code == 1 and "IPF101" in result.stdout


# --- recurrent state handed back (analysis/carried.py, hazard.CarriedState) -------------------

from codemod.config import Settings  # noqa: E402
from tests.programs import process_in_project, raises_inplace, run_program  # noqa: E402

_STEP = (pathlib.Path(__file__).resolve().parent.parent / "bench" / "probes" / "stA42" / "p2_conv_state_step.py")


def _proven(source: str) -> list:
    return [(f.code, f.span.line) for f in process_in_project(source, Settings()).findings if f.code.startswith("IPF1")]


def test_a_loop_that_keeps_only_the_last_output_runs_and_is_not_proven():
    """``y, window = conv.step(xs[t], window)`` with only the last ``y`` used after the loop: each
    turn drops the previous call's output, and with it the op that saved the window, so the next
    call's write trips nothing (an RNN read out at its last step). Was proven IPF103/IPF104."""
    source = _STEP.read_text().replace("        outs.append(y)\n", "").replace(
        "torch.stack(outs).pow(2).sum().backward()", "y.pow(2).sum().backward()")
    run_program(source, "compute")
    assert _proven(source) == []
    printed = _STEP.read_text().replace("        outs.append(y)\n", "        print(y.shape)\n").replace(
        "torch.stack(outs).pow(2).sum().backward()", "y.pow(2).sum().backward()")
    run_program(printed, "compute")
    assert _proven(printed) == []
    reset = _STEP.read_text().replace("        outs.append(y)\n", "        outs = []\n        outs.append(y)\n")
    run_program(reset, "compute")
    assert _proven(reset) == []


@pytest.mark.parametrize("kept", ["outs.append(y.detach())", "outs.append(y.sum().item())", "outs.append(float(y.sum()))"])
def test_outputs_kept_only_as_numbers_or_detached_are_not_kept(kept):
    """What the loop keeps of each output has no history (``.item()``, ``.detach()``, ``float``):
    the previous call's saving op is dropped all the same; the program runs."""
    source = _STEP.read_text().replace("        outs.append(y)\n", f"        {kept}\n").replace(
        "torch.stack(outs).pow(2).sum().backward()", "y.pow(2).sum().backward()")
    run_program(source, "compute")
    assert _proven(source) == []


@pytest.mark.parametrize("old, new", [
    ("        outs.append(y)\n", "        total = total + y.pow(2).sum()\n"),
    ("        outs.append(y)\n", "        total += y.pow(2).sum()\n"),
    ("        outs.append(y)\n", "        buf[t] = y\n"),
    ("        outs.append(y)\n", "        z = y * 2.0\n        h = torch.tanh(z)\n        total = total + h.sum()\n"),
])
def test_outputs_kept_across_turns_stay_proven(old, new):
    source = _STEP.read_text().replace(old, new).replace(
        "    outs = []\n", "    outs = []\n    total = torch.zeros(())\n    buf = torch.zeros(5, 2, 4)\n").replace(
        "torch.stack(outs).pow(2).sum().backward()", "(total + buf.sum()).backward()")
    assert raises_inplace(source, "compute")
    assert len(_proven(source)) == 2, source


# --- a module returned by a builder other files call (analysis/factories.py, rules/inplace_argument) ----

from codemod.engine.pipeline import process_source  # noqa: E402
from codemod.engine.project import build_index  # noqa: E402
from codemod.findings import Status  # noqa: E402

LAYERS = '''\
import torch
from torch import nn


def get_act(kind="relu"):
    if kind == "relu":
        return nn.ReLU(inplace=True)
    return nn.GELU()


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = get_act("relu")

    def forward(self, x):
        y = torch.sigmoid(self.fc(x))
        return self.act(y)


def main():
    torch.manual_seed(0)
    Block()(torch.randn(2, 4)).sum().backward()
'''

USER = '''\
import torch
from layers import get_act


class Clamp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.act = get_act()

    def forward(self, x):
        x = x * 1.0
        self.act(x)
        return x


def compute():
    return Clamp()(torch.tensor([-1.0, 2.0]))
'''

NEUTRAL = "import torch\n\n\ndef compute():\n    return torch.zeros(1)\n"


def _layers_findings(tmp_path, other: str, fix: bool = False):
    (tmp_path / "layers.py").write_text(LAYERS)
    (tmp_path / "user.py").write_text(other)
    index = build_index([str(tmp_path / "layers.py"), str(tmp_path / "user.py")])
    return process_source(LAYERS.encode(), "layers.py", Settings(), fix=fix, project=index, module_name="layers")


def _run_user(tmp_path, layers: str):
    import runpy
    import sys
    (tmp_path / "layers.py").write_text(layers)
    (tmp_path / "user.py").write_text(USER)
    sys.path.insert(0, str(tmp_path))
    try:
        for name in ("layers", "user"):
            sys.modules.pop(name, None)
        return runpy.run_path(str(tmp_path / "user.py"))["compute"]()
    finally:
        sys.path.remove(str(tmp_path))
        for name in ("layers", "user"):
            sys.modules.pop(name, None)


def test_a_builder_another_file_calls_gets_no_safe_inplace_false(tmp_path):
    """``get_act()`` hands an in-place ReLU to ``user.py``, whose ``self.act(x)`` alone relies on
    the mutation: turning ``inplace`` off in the builder changes what ``user.compute`` returns.
    The hazard (Block's ReLU after the sigmoid) is real; its fix was safe, judged on this file's
    calls of the builder only."""
    assert raises_inplace(LAYERS, "main")
    found = [f for f in _layers_findings(tmp_path, USER).findings if f.code == "IPF102"]
    assert found and all(f.status is not Status.SAFE for f in found), found
    fixed = LAYERS.replace("nn.ReLU(inplace=True)", "nn.ReLU(inplace=False)")
    assert not torch.equal(_run_user(tmp_path, fixed), _run_user(tmp_path, LAYERS))


def test_a_builder_no_other_file_calls_keeps_its_safe_fix(tmp_path):
    found = [f for f in _layers_findings(tmp_path, NEUTRAL).findings if f.code == "IPF102"]
    assert found and all(f.status is Status.SAFE for f in found), found


# --- leaves handed to another file's writer, written through a detached copy (hazard.saved_by_callers_elsewhere) ---

import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

from tests.test_recall42_leaves_handed_on import MODEL  # noqa: E402

_LEAF_ERROR = "a leaf Variable that requires grad is being used in an in-place operation"
_HELPERS = {
    "detached-view": "def he_init(tensor, fan_in):\n    t = tensor.detach()\n    t[:] = torch.randn_like(tensor) * (2.0 / fan_in) ** 0.5\n",
    "detached-method": "def he_init(tensor, fan_in):\n    t = tensor.detach()\n    t.normal_(0, (2.0 / fan_in) ** 0.5)\n",
    "detached-flat": "def he_init(tensor, fan_in):\n    flat = tensor.detach().view(-1)\n    flat.fill_(0.5)\n",
}


def _cross_project(tmp_path, helper: str):
    (tmp_path / "initlib.py").write_text("import torch\n\n\n" + helper)
    (tmp_path / "model.py").write_text(textwrap.dedent(MODEL.format(imports="from initlib import he_init",
                                                                    call="he_init(net.w, 3)")))
    run = subprocess.run([sys.executable, "-c", "import model\ntry:\n    model.compute()\n"
                          "except RuntimeError as e:\n    print(str(e))\n"], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    check = subprocess.run([sys.executable, "-m", "codemod", "check", "--no-cache", "--output-format", "json",
                            "model.py", "initlib.py"], capture_output=True, text=True, cwd=tmp_path)
    assert check.returncode in (0, 1), check.stderr
    found = sorted((f["filename"].rsplit("/", 1)[-1], f["location"]["row"], f["code"])
                   for f in json.loads(check.stdout)["findings"])
    return _LEAF_ERROR in run.stdout, found


@pytest.mark.parametrize("name", sorted(_HELPERS))
def test_a_helper_writing_through_a_detached_copy_of_the_handed_leaf_is_not_proven(tmp_path, name):
    """``t = tensor.detach(); t[:] = ...`` in another file's init helper handed ``net.w``: a detached
    copy requires no grad, so PyTorch lets one write into it (the same file already knew; the
    caller's recorded leaf, ``CallFact.args_saved``, was taken as proof at the write)."""
    raised, found = _cross_project(tmp_path, _HELPERS[name])
    assert not raised
    assert not [f for f in found if f[2].startswith("IPF1")], found


def test_a_helper_writing_through_a_plain_view_of_the_handed_leaf_stays_proven(tmp_path):
    raised, found = _cross_project(tmp_path, "def he_init(tensor, fan_in):\n    t = tensor.view(-1)\n    t[:] = 0.5\n")
    assert raised and found == [("initlib.py", 6, "IPF104")], found


@pytest.mark.parametrize("helper", [
    "def he_init(tensor, fan_in):\n    if fan_in > 0:\n        return\n    tensor[:] = 0.0\n",
    "def he_init(tensor, fan_in, inplace=False):\n    if not inplace:\n        return torch.zeros_like(tensor)\n"
    "    tensor[:] = 0.0\n    return tensor\n",
], ids=["early-return", "flag-guard-return"])
def test_a_write_after_an_early_return_does_not_run_on_every_call(tmp_path, helper):
    """``_used_on_every_call`` read only the tests around each use of the parameter; a ``return``
    under an ``if`` before it (the flag guard written as an early return, as ``if not inplace:
    return f(x)``) means what another file's call passes may never reach the write."""
    raised, found = _cross_project(tmp_path, helper)
    assert not raised
    assert not [f for f in found if f[2].startswith("IPF1")], found


# --- speed: leaves._entry_point walked the whole module once per function asked ------------------

def _module_walks(monkeypatch, functions: int) -> int:
    from codemod.analysis.tree import Tree
    from codemod.engine.pipeline import process_source as run

    lines = ["import torch", "from torch import nn", "", "", "class Net(nn.Module):", "    def __init__(self):",
             "        super().__init__()", "        self.fc = nn.Linear(3, 3)", ""]
    for k in range(functions):
        lines += ["", f"def f{k}():", "    net = Net()", "    net.fc.weight[0] = 1.0", "    return net", ""]
    count = [0]
    walk = Tree.walk

    def counted(self, node):
        if node is self.module:
            count[0] += 1
        return walk(self, node)

    monkeypatch.setattr(Tree, "walk", counted)
    result = run("\n".join(lines).encode(), "q.py", Settings())
    assert result.error is None and len([f for f in result.findings if f.code == "IPF105"]) == functions
    return count[0]


def test_entry_points_are_found_without_a_walk_of_the_module_per_function(monkeypatch):
    """Each write into ``net.fc.weight`` in a function nothing calls asked ``_entry_point``, which
    walked the whole module for the function's name: 1,200 such functions took 87 s (300: 6 s)."""
    assert _module_walks(monkeypatch, 10) == _module_walks(monkeypatch, 20)
