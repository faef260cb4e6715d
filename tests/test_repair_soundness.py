"""locate and repair after issue 12: no silent "nothing to repair", fall back when a choice
fails verification, dtype settled before it is claimed, nothing unverified written."""

from __future__ import annotations

import json
import textwrap

import pytest

torch = pytest.importorskip("torch")

from typer.testing import CliRunner  # noqa: E402

from codemod.frontends.cli import app  # noqa: E402
from codemod.runtime.locate import locate_target  # noqa: E402
from codemod.runtime.repair import repair  # noqa: E402

runner = CliRunner()

HOLDER = """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        h = torch.sigmoid(self.fc(x))
        self.h = h
        h += 1
        return h * 2


def example_inputs():
    return (torch.randn(2, 3),)
"""

HALF_LEAF = """
import torch


def fn():
    w = torch.ones(3, dtype=torch.float16, requires_grad=True)
    g = torch.full((3,), 0.1)
    w.sub_(g)
    return (w.float() * 2).sum()
"""

IMPORT_TIME = """
import torch

x = torch.randn(3, requires_grad=True)
y = torch.sigmoid(x)


def fn():
    y.add_(1)
    return y * 2
"""

THREADED = """
import concurrent.futures

import torch


def work():
    x = torch.randn(3, requires_grad=True)
    y = torch.sigmoid(x)
    y += 1
    y.sum().backward()
    return x.grad


def fn():
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(work).result()
"""


def write(tmp_path, text, name="model.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def test_repair_falls_back_to_clone_at_save_when_the_first_choice_fails(tmp_path):
    path = write(tmp_path, HOLDER)
    result = repair(f"{path}::Net", devices=["cpu"])
    # `h = h + 1` would leave self.h stale: it is unsafe (the alias kept on self is read later),
    # so it is not written; where it is tried first, it does not verify.
    assert 1 <= len(result.attempts) <= 2
    for attempt in result.attempts[:-1]:
        assert attempt.verification is not None and not attempt.verification.verified
    assert result.verified and ".clone()" in result.repaired and "h += 1" in result.repaired


def test_a_dtype_change_on_a_leaf_is_not_written_a_clone_that_keeps_the_dtype_is(tmp_path):
    """`w.sub_(g)` on a float16 leaf with a float32 `g`: the copy `w = w.sub(g)` promotes to
    float32 and changes the values, so it does not verify and is never written; a clone before
    the write (the static start-value clone, or a candidate from the run) keeps float16."""
    path = write(tmp_path, HALF_LEAF)
    located = locate_target(f"{path}::fn")
    assert [c.kind for c in located.conflicts] == ["leaf"] and not located.conflicts[0].same_dtypes
    out = runner.invoke(app, ["repair", f"{path}::fn", "--write", "--device", "cpu"])
    # the static side's start-value clone (`w`'s own gradient is never observed) keeps float16
    # and is the first candidate since stB38; the promoting copy is never written either way
    assert out.exit_code == 0, out.stdout
    written = path.read_text()
    assert "w = w.clone()\n" in written and "    w.sub_(g)" in written and "w.sub(g" not in written
    assert written.index("w = w.clone()") < written.index("w.sub_(g)")


def test_a_tensor_saved_at_import_time_is_located_and_repaired(tmp_path):
    path = write(tmp_path, IMPORT_TIME)
    located = locate_target(f"{path}::fn")
    assert [(c.save.line, c.mutation.line) for c in located.conflicts] == [(4, 8)]
    out = runner.invoke(app, ["repair", f"{path}::fn", "--write", "--device", "cpu"])
    assert out.exit_code == 0, out.stdout
    assert "y = torch.sigmoid(x).clone()" in path.read_text()


def test_an_inplace_error_that_is_not_located_is_exit_1(tmp_path):
    path = write(tmp_path, THREADED)
    out = runner.invoke(app, ["locate", f"{path}::fn"])
    assert out.exit_code == 1 and "not located" in out.stdout
    doc = json.loads(runner.invoke(app, ["locate", f"{path}::fn", "--format", "json"]).stdout)
    assert doc["conflicts"] == [] and doc["error_kind"] == "saved" and "another thread" in doc["not_seen"]
    out = runner.invoke(app, ["repair", f"{path}::fn", "--device", "cpu"])
    assert out.exit_code == 1 and "nothing to repair" not in out.stdout and "not located" in out.stdout


def test_locate_output_and_timeout(tmp_path):
    path = write(tmp_path, """
        import torch


        def fn():
            print("chatter", flush=True)
            while True:
                pass
    """)
    result = locate_target(f"{path}::fn", timeout=2)
    assert "did not finish" in result.error and "chatter" in result.output
