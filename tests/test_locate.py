"""The locator names both lines of every conflict; repair fixes only those lines, verified.

Broken model fixtures mark the line that saved the tensor with ``# <- saved`` and the line the
fix belongs on (the mutation, or the constructor of an in-place module) with ``# <- modified``.
"""

from __future__ import annotations

import difflib

import pytest

torch = pytest.importorskip("torch")

import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from codemod.runtime.locate import LocatedInplaceError, Locator, locate_target  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from codemod.frontends.cli import app  # noqa: E402
from codemod.runtime.harness import load_module  # noqa: E402

from codemod.testing import MODELS, headers  # noqa: E402

runner = CliRunner()
BROKEN = [p for p in MODELS if headers(p)["expect"] == "broken"]
WORKING = [p for p in MODELS if headers(p)["expect"] == "working"]


def marked(path, word):
    return {i for i, line in enumerate(path.read_text().splitlines(), 1)
            if "# <-" in line and word in line.split("# <-")[1]}


@pytest.mark.parametrize("path", BROKEN, ids=lambda p: p.stem)
def test_locate_names_the_save_and_the_mutation(path):
    result = locate_target(f"{path}::{headers(path)['verify']}")
    assert result.conflicts, result.error
    saved, modified = marked(path, "saved"), marked(path, "modified")
    hits = [c for c in result.conflicts
            if c.fix_site is not None and c.fix_site.line in modified
            and (not saved or (c.save is not None and c.save.line in saved))]
    assert hits, "\n".join(c.describe() for c in result.conflicts)
    assert all(c.fix_site.file == str(path) for c in hits)
    assert any(c.confirmed for c in result.conflicts), "backward should confirm the conflict"


@pytest.mark.parametrize("path", WORKING, ids=lambda p: p.stem)
def test_no_finding_on_working_models(path):
    result = locate_target(f"{path}::{headers(path)['verify']}")
    assert result.conflicts == [] and result.error == ""


@pytest.mark.parametrize("path", WORKING, ids=lambda p: p.stem)
def test_locator_keeps_values_and_gradients_bit_identical(path):
    module = load_module(path.read_text(), str(path), "bitwise")
    name = headers(path)["verify"]

    def run(locator):
        torch.manual_seed(0)
        if name[0].isupper():
            model = getattr(module, name)()
            args = module.example_inputs()
            args = args if isinstance(args, tuple) else (args,)
            with locator:
                out = model(*args)
                out.sum().backward()
            return [out.detach()] + [p.grad.clone() for p in model.parameters()]
        with locator:
            out = getattr(module, name)()
            out.sum().backward()
        return [out.detach()]

    from contextlib import nullcontext
    plain, located = run(nullcontext()), run(Locator())
    assert all(torch.equal(a, b) for a, b in zip(plain, located))


@pytest.mark.parametrize("path", BROKEN, ids=lambda p: p.stem)
def test_repair_changes_only_culprit_lines_verifies_and_writes(path, tmp_path):
    copy = tmp_path / path.name
    copy.write_bytes(path.read_bytes())
    out = runner.invoke(app, ["repair", f"{copy}::{headers(path)['verify']}", "--write", "--device", "cpu"])
    assert out.exit_code == 0 and f"wrote {copy}" in out.stdout, out.stdout
    assert "Verified." in out.stdout
    allowed = marked(path, "saved") | marked(path, "modified")
    before, after = path.read_text().splitlines(), copy.read_text().splitlines()
    touched = set()
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, before, after).get_opcodes():
        if tag == "insert":
            touched.add(i1 + 1)  # lines inserted right before original line i1 + 1
        elif tag != "equal":
            touched.update(range(i1 + 1, i2 + 1))
    assert touched and touched <= allowed, f"changed lines {sorted(touched)}, culprits {sorted(allowed)}"


@pytest.mark.parametrize("path", WORKING, ids=lambda p: p.stem)
def test_repair_leaves_working_models_alone(path, tmp_path):
    copy = tmp_path / path.name
    copy.write_bytes(path.read_bytes())
    out = runner.invoke(app, ["repair", f"{copy}::{headers(path)['verify']}", "--write", "--device", "cpu"])
    assert out.exit_code == 0 and "nothing to repair" in out.stdout, out.stdout
    assert copy.read_bytes() == path.read_bytes()


def test_dtype_of_a_whole_chain_is_checked():
    with Locator() as loc:
        x = torch.randn(3, requires_grad=True)
        h = torch.sigmoid(x.double())
        h.mul_(2).add_(torch.ones(3))  # the add_ mixes float64 and float32
        with pytest.raises(RuntimeError):
            h.sum().backward()
    assert [c.kind for c in loc.conflicts] == ["saved-then-modified"]
    assert loc.conflicts[0].same_dtypes is False


def test_raise_on_conflict_stops_at_the_bad_line():
    x = torch.randn(3, requires_grad=True)
    with pytest.raises(LocatedInplaceError) as info:
        with Locator(raise_on_conflict=True):
            y = torch.sigmoid(x)
            y += 1  # the bad line
    assert "y += 1  # the bad line" in str(info.value)
    frames = [f for f in __import__("traceback").extract_tb(info.value.__traceback__)
              if f.filename == __file__]
    assert frames[-1].line == "y += 1  # the bad line"


def test_optimizer_step_under_a_retained_graph_is_diagnosed():
    torch.manual_seed(0)
    model = nn.Linear(3, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, foreach=False)
    x = torch.randn(2, 3, requires_grad=True)  # so that linear saves its weight
    with Locator() as loc:
        loss = model(torch.tanh(x)).pow(2).sum()
        loss.backward(retain_graph=True)
        opt.step()
        with pytest.raises(RuntimeError):
            loss.backward()
    kinds = {c.kind for c in loc.conflicts}
    assert kinds == {"optimizer-step"}
    assert "no rewrite of an in-place op fixes this" in loc.conflicts[0].message


def test_inplace_flag_switched_on_at_run_time_is_diagnosed():
    with Locator() as loc:
        act = nn.ReLU()
        act.inplace = True
        x = torch.randn(4, requires_grad=True)
        h = torch.sigmoid(x)
        out = act(h)
        with pytest.raises(RuntimeError):
            out.sum().backward()
    assert [c.kind for c in loc.conflicts] == ["runtime-inplace-flag"]


def test_no_false_positive_on_harmless_inplace_ops():
    x = torch.randn(2, 3, requires_grad=True)
    conv = nn.Conv1d(2, 2, 1)
    bn = nn.BatchNorm1d(2)
    with Locator() as loc:
        out = conv(x.unsqueeze(0).transpose(0, 1).reshape(3, 2, 1))
        out += 1  # conv saved its input, not its output
        F.relu(out, inplace=True)
        out = bn(out)
        out.sum().backward()
        with torch.no_grad():
            conv.weight.data.mul_(0.5)  # .data: another version counter
        with torch.inference_mode():
            t = torch.ones(3)
            t += 1
    assert loc.conflicts == []
