"""Script repair counts what the script prints as evidence, as ``verify`` does (issue 23).

A repaired script can keep every loss, gradient and parameter the record compares and still do
something else: a running statistic that is only logged (the meters of pytorch/examples'
``imagenet`` loop, a running mean printed each step). A repair that turns its in-place update
into a rebinding nobody reads keeps every gradient equal; before, the proof verified on the
gradients alone. Every run is a real interpreter with real torch.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.script import Script, interpreters, run_script  # noqa: E402
from codemod.runtime.script_repair import Verdict, judge  # noqa: E402

LOGGED = """\
import torch

torch.manual_seed(0)
w = torch.randn(4, 3, requires_grad=True)
running = torch.zeros(3)
for step in range(2):
    x = torch.randn(5, 4)
    h = x @ w
    running.mul_(0.9).add_(0.1 * h.detach().mean(0))
    print("step", step, "running mean", [round(v, 4) for v in running.tolist()])
    loss = h.tanh().sum()
    loss.backward()
"""


@pytest.fixture(scope="module")
def server():
    shared = interpreters(seed=True)
    yield shared
    if shared is not None:
        shared.close()


def _runs(tmp_path, server, new_text):
    (tmp_path / "train.py").write_text(LOGGED)
    script = Script(path="train.py", cwd=str(tmp_path))
    common = dict(mode="record", max_backward=2, seed=True, capture=True, workdir=str(tmp_path), server=server)
    reference = run_script(script, **common)
    repaired = run_script(script, sources={str(tmp_path / "train.py"): new_text}, **common)
    assert reference.finished and repaired.finished, (reference.error, repaired.error)
    return reference, repaired


def test_a_repair_that_changes_only_a_printed_value_is_unproven(tmp_path, server):
    broken = LOGGED.replace("running.mul_(0.9).add_(", "running.mul(0.9).add(")
    verdict, reasons, comparison = judge(*_runs(tmp_path, server, broken))
    assert comparison.gradients > 0 and not comparison.differences  # the record alone agrees
    assert verdict is Verdict.unproven, reasons
    assert any("printed line 1 differs" in r and "running mean" in r for r in reasons), reasons


def test_a_faithful_repair_verifies_and_counts_the_printed_lines(tmp_path, server):
    same = LOGGED.replace("h = x @ w", "h = torch.matmul(x, w)")
    verdict, reasons, comparison = judge(*_runs(tmp_path, server, same))
    assert verdict is Verdict.verified, reasons
    assert comparison.printed == 2
