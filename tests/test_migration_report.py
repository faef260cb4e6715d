"""The migration check's report (``bench/migration_compare.py``) says which comparison each column
used: the original against itself bit for bit (the same kernels run), each rewritten tier within a
few ulps of the dtype (other kernel sequences, whose last bits depend on the CPU), and a
difference beyond that still shows. Checked on saved runs (``--reuse-runs``), without the
libraries: the report function end to end, no model is built."""

from __future__ import annotations

import pathlib
import sys

import pytest

torch = pytest.importorskip("torch")

from .final_state import REWRITE_ULPS  # noqa: E402

BENCH = pathlib.Path(__file__).resolve().parent.parent / "bench"


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(BENCH))
    try:
        import migration_compare
        from migration import cases, state
        yield migration_compare, cases, state
    finally:
        sys.path.remove(str(BENCH))


def one_ulp_up(t: torch.Tensor) -> torch.Tensor:
    return torch.nextafter(t, torch.full_like(t, float("inf")))


def saved_runs(work: pathlib.Path, helper: str, family: str):
    """original, original_again, safe, unsafe: the safe tier an ulp off (another kernel's last
    bit), the unsafe tier with a lost update in the helper."""
    w = torch.linspace(-3, 3, 12, dtype=torch.float32)
    base = {helper: {"state": {"opt.w": w, "n": torch.tensor(3)}, "error": None},
            family: {"state": {"out": w * 2, "w.grad": w.double()}, "error": None}}

    def variant(helper_w, family_out):
        return {"cases": {helper: {"state": {"opt.w": helper_w, "n": torch.tensor(3)}, "error": None},
                          family: {"state": {"out": family_out, "w.grad": w.double()}, "error": None}},
                "files": [], "origin": {}}

    runs = {"original": {"cases": base, "files": [], "origin": {}},
            "original_again": variant(w.clone(), w * 2),
            "safe": variant(one_ulp_up(w), w * 2),
            "unsafe": variant(w + 0.5, one_ulp_up(w * 2))}
    for name, run in runs.items():
        torch.save(run, work / f"{name}.pt")
        (work / ("original" if name == "original_again" else name)).mkdir(exist_ok=True)


def test_the_report_says_which_comparison_each_column_used(bench, tmp_path, capsys):
    migration_compare, cases, _ = bench
    helper = next(n for n, k in cases.KIND.items() if k == cases.HELPER)
    family = next(n for n, k in cases.KIND.items() if k == cases.FAMILY)
    saved_runs(tmp_path, helper, family)
    assert migration_compare.main(["all", "--work", str(tmp_path), "--no-prepare", "--reuse-runs", "--no-bisect",
                                   "--cases", f"{helper},{family}"]) == 0
    report = (tmp_path / "report.md").read_text()
    assert capsys.readouterr().out.strip() == report.strip()
    ulps = migration_compare.state.REWRITE_ULPS
    assert ulps == REWRITE_ULPS, "the tests and the migration check allow the same ulps"
    assert "- original vs itself: bit for bit" in report
    assert f"- safe tier: within {ulps} ulps of each tensor's dtype" in report
    assert f"- unsafe tier: within {ulps} ulps of each tensor's dtype" in report
    assert f"ATen CPU capability {torch.backends.cpu.get_cpu_capability()}" in report
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ") for line in report.splitlines() if line.startswith("| ")}
    # an ulp from another kernel: within the tolerance, and said so (not "identical")
    assert rows[helper][2] == "identical (2 tensors)"
    assert rows[helper][3] == f"within {ulps} ulps (2 tensors, 1 not bit-identical)"
    assert rows[family][4].startswith(f"within {ulps} ulps")
    # a lost update is far beyond it
    assert rows[helper][4].startswith("**1/2 differ**, max abs 0.5 (`opt.w`)")
    assert f"- unsafe, {helper}: 1 of 2 parts differ: `opt` (1 tensors, max abs 0.5)" in report
    assert f"- safe, {helper}" not in report


def test_original_against_itself_stays_bit_for_bit(bench):
    """One ulp between two runs of the same code is a difference: the same kernels ran."""
    migration_compare, _, state = bench
    w = torch.linspace(-3, 3, 12)
    a, b = {"state": {"w": w}, "error": None}, {"state": {"w": one_ulp_up(w)}, "error": None}
    assert migration_compare.ULPS["original_again"] == 0
    assert migration_compare.cell(a, b, migration_compare.ULPS["original_again"]).startswith("**1/1 differ**")
    assert migration_compare.differs(a, b, 0) and not migration_compare.differs(a, b, state.REWRITE_ULPS)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.complex64])
def test_the_tolerance_scales_with_the_dtype(bench, dtype):
    _, _, state = bench
    x = torch.linspace(-4, 4, 9).to(dtype)
    eps = torch.finfo(dtype).eps
    near, far = x + 4 * eps * 4, x + 16 * eps * 4
    assert state.compare({"x": x}, {"x": near}, state.REWRITE_ULPS) == state.Difference(0, 1, 0.0, None, 1)
    assert state.compare({"x": x}, {"x": near}).tensors == 1
    assert state.compare({"x": x}, {"x": far}, state.REWRITE_ULPS).tensors == 1
    assert state.compare({"n": torch.tensor([1, 2])}, {"n": torch.tensor([1, 3])}, state.REWRITE_ULPS).tensors == 1
