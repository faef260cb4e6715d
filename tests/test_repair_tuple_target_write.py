"""``repair`` of a write into a buffer through a tuple target (pypose's LQR rollout,
commit b6fa7572: ``current_x[..., i + 1, :], _ = self.system(current_x[..., i, :], u[..., i, :])``).

Found at stop 50 (dev case set26/2604, unchanged on a CPU and on an H200: "no rewrite found"):
the run-made "write into a copy" candidate (``name = name.clone()`` before the statement) knew
``x[i] = v`` but not ``x[i], _ = f(...)`` (now: the one subscript target's base); and a copy made
before the statement does not help here: the right side reads the copy, the step saves it, the
write then goes into it. The candidate that works copies the reads of the written tensor on the
writing line (they run before the write: no value changes). Also shown: a fix that inserts a
line above its write and leaves the conflict in place is seen to (the write's line moved).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.repair import render, repair  # noqa: E402

DYNAMICS = '''\
import torch


def step(x, w):
    y = torch.tanh(x * w)  # mul saves x: a view of the buffer (in another file, as pypose's system)
    return y, y.sum()
'''

ROLLOUT = '''\
import torch

from dynamics import step


def rollout(x0, w, T=4):
    xs = torch.zeros(T, 3)
    xs[0, :] = x0
    for i in range(T - 1):
        xs[i + 1, :], _ = step(xs[i, :], w)
    return xs


def compute():
    torch.manual_seed(0)
    w = torch.randn(3, requires_grad=True)
    xs = rollout(torch.randn(3), w)
    (xs * torch.arange(12.).reshape(4, 3)).sum().backward()
    return {"xs": xs.detach(), "w": w.grad}
'''
# The maintainers' shape of fix: the previous step's output is fed, the buffer only stores it.
REF = ROLLOUT.replace("    for i in range(T - 1):\n        xs[i + 1, :], _ = step(xs[i, :], w)\n",
                      "    xt = x0\n    for i in range(T - 1):\n        xs[i + 1, :] = xt = step(xt, w)[0]\n")


def _run(text, tmp_path, name):
    (tmp_path / "dynamics.py").write_text(DYNAMICS)
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    namespace = {}
    import sys
    sys.path.insert(0, str(tmp_path))
    try:
        exec(compile(text, str(path), "exec"), namespace)
        return namespace["compute"]()
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("dynamics", None)


def test_the_rollout_raises_and_the_reference_runs(tmp_path):
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _run(ROLLOUT, tmp_path, "orig")
    assert _run(REF, tmp_path, "ref")["w"] is not None


def test_a_write_through_a_tuple_target_goes_into_a_copy(tmp_path):
    (tmp_path / "dynamics.py").write_text(DYNAMICS)
    path = tmp_path / "rollout.py"
    path.write_text(ROLLOUT)
    result = repair(f"{path}::compute", devices=["cpu"])
    assert result.verified, render(result)
    assert not result.others, "the dynamics file is unchanged"
    # a copy before the statement is read and saved again (the conflict stays: tried, undone);
    # the read on the writing line copied is the fix (the right side runs before the write)
    assert result.repaired == ROLLOUT.replace("step(xs[i, :], w)", "step(xs[i, :].clone(), w)"), result.repaired
    assert any("the conflict was still there" in r for a in result.attempts for r in a.rejected), render(result)
    want, got = _run(REF, tmp_path, "want"), _run(result.repaired, tmp_path, "got")
    assert torch.allclose(want["xs"], got["xs"]) and torch.allclose(want["w"], got["w"])
