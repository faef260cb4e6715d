"""The final-state comparison (tests/final_state.py) is bit for bit only where both runs ran the
same kernels on the same layouts; where a rewrite runs others (an out-of-place op for an in-place
one, a reduction split otherwise), the last bits depend on the CPU's code path (MKL and ATen pick
it by instruction set), and a few ulps of the dtype are allowed."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from .final_state import REWRITE_ULPS, differences, run_example, ulps_for  # noqa: E402

PROGRAM = '''import torch


def example():
    w = torch.linspace(-2, 2, 64, requires_grad=True)
    x = torch.linspace(0, 1, 64)
    {body}
    y.backward()
    return {{"y": y, "w": w}}
'''


def run(tmp_path, name, body):
    path = tmp_path / f"{name}.py"
    path.write_text(PROGRAM.format(body=body))
    return run_example(path)


def test_the_same_program_runs_the_same_kernels_and_is_compared_bit_for_bit(tmp_path):
    a, b = run(tmp_path, "a", "y = (w * x).sum()"), run(tmp_path, "b", "y = (w * x).sum()")
    assert a.kernels and a.kernels == b.kernels
    assert any("sum" in k[0] for k in a.kernels) and any("mul" in k[0] for k in a.kernels)
    assert ulps_for(a, b) == 0
    b["y"] = torch.nextafter(b["y"], torch.tensor(float("inf")))  # one ulp off: the same kernels never do that
    assert differences(a, b, ulps_for(a, b)) == {"y": pytest.approx((a["y"] - b["y"]).abs().item())}


def test_other_kernels_get_a_few_ulps_and_no_more(tmp_path):
    a = run(tmp_path, "a", "y = (w * x).sum()")
    b = run(tmp_path, "b", "y = (w * x).view(8, 8).sum(1).sum()")  # the sum split otherwise
    assert a.kernels != b.kernels and ulps_for(a, b) == REWRITE_ULPS
    assert differences(a, b, ulps_for(a, b)) == {}
    c = run(tmp_path, "c", "y = (w * x).sum() + 1e-3")  # a real difference: far beyond a few ulps
    assert set(differences(a, c, ulps_for(a, c))) == {"y"}


def test_backward_kernels_are_traced_too(tmp_path):
    """Two programs with one forward and another backward: not the same kernels."""
    a = run(tmp_path, "a", "y = (w * x).sum()")
    b = run(tmp_path, "b", "y = (w * x.clone()).sum()")
    assert len(b.kernels) > len(a.kernels) and ulps_for(a, b) == REWRITE_ULPS


def test_an_untraced_state_is_never_compared_bit_for_bit(tmp_path):
    a = run(tmp_path, "a", "y = (w * x).sum()")
    assert ulps_for(a, dict(a)) == REWRITE_ULPS
