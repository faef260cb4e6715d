""""Verified." must mean proven (issue 12): wrong rewrites never verify, right ones do.

The cases live in ``soundness_cases.py`` (one per way the old harness said "Verified." to a
rewrite that changed the program, or refused a right one). Every run here is real: real torch,
the program and its rewrite each in a fresh process.
"""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

from typer.testing import CliRunner  # noqa: E402

from codemod.frontends.cli import app  # noqa: E402
from codemod.runtime.verify import Verdict, verify  # noqa: E402

from .soundness_cases import RIGHT, WRONG, Case  # noqa: E402


def materialise(case: Case, tmp_path):
    for name, text in (case.files or {}).items():
        (tmp_path / name).write_text(Case("", "", text, []).original())
    model = tmp_path / "model.py"
    model.write_text(case.original())
    return model


def judge(case: Case, tmp_path):
    model = materialise(case, tmp_path)
    return verify(f"{model}::{case.name}", rewritten_source=case.rewritten(), devices=["cpu"],
                  **(case.options or {}))


def explain(result) -> str:
    d = result.devices[0]
    return "\n".join([f"verdict {result.verdict.value}, reference {d.reference}",
                      f"original {d.original.status} {d.original.error}",
                      f"rewritten {d.rewritten.status} {d.rewritten.error}", *d.problems])


def test_there_are_enough_cases_for_every_bullet():
    assert len(WRONG) >= 30 and len(RIGHT) >= 10
    bullets = {c.bullet for c in WRONG}
    assert {"leaf", "view", "inputs", "state", "function", "numbers", "process", "reference"} <= bullets
    assert len({c.id for c in WRONG + RIGHT}) == len(WRONG) + len(RIGHT)


@pytest.mark.parametrize("case", WRONG, ids=lambda c: c.id)
def test_a_wrong_rewrite_does_not_verify(case, tmp_path):
    result = judge(case, tmp_path)
    assert result.verdict in (Verdict.NOT_VERIFIED, Verdict.UNPROVEN), explain(result)


@pytest.mark.parametrize("case", RIGHT, ids=lambda c: c.id)
def test_a_right_rewrite_verifies(case, tmp_path):
    result = judge(case, tmp_path)
    assert result.verdict is Verdict.VERIFIED, explain(result)


def by_id(case_id: str) -> Case:
    return next(c for c in WRONG + RIGHT if c.id == case_id)


# ---------------------------------------------------------------- what each verdict says
def test_leaf_reference_is_named_and_catches_the_dead_store(tmp_path):
    result = judge(by_id("sgd-update-becomes-a-dead-rebind"), tmp_path)
    d = result.devices[0]
    assert d.reference == "no-grad meaning" and "torch.no_grad()" in d.meaning and "p.add_" in d.meaning
    assert result.verdict is Verdict.NOT_VERIFIED
    assert any(x.where.startswith("final state") and "model.weight" in x.where for x in d.differences)


def test_leaf_meaning_that_does_not_fit_is_unproven(tmp_path):
    result = judge(by_id("leaf-read-before-update-is-unproven"), tmp_path)
    assert result.verdict is Verdict.UNPROVEN
    assert "does not fit" in result.devices[0].reasons[0]


def test_view_error_whose_base_is_read_after_is_judged_with_views_allowed(tmp_path):
    result = judge(by_id("view-error-base-read-after-copy-hides-the-write"), tmp_path)
    d = result.devices[0]
    assert result.verdict is Verdict.NOT_VERIFIED and d.reference == "views allowed", explain(result)
    assert "ordinary views" in d.meaning


def test_dtype_change_is_reported_as_such(tmp_path):
    result = judge(by_id("output-dtype-changed"), tmp_path)
    assert any("dtype float16 -> float32" in x.what for x in result.devices[0].differences)


def test_isolation_grad_mode_of_the_rewrite_does_not_leak_into_the_original(tmp_path):
    result = judge(by_id("rewrite-turns-grad-off-for-everyone"), tmp_path)
    d = result.devices[0]
    assert d.original.status == "inplace-error" and d.reference == "oracle"
    assert result.verdict is Verdict.NOT_VERIFIED


def test_a_hanging_rewrite_times_out(tmp_path):
    result = judge(by_id("rewrite-hangs"), tmp_path)
    assert "timed out after 3 s" in result.devices[0].rewritten.error


def test_nothing_comparable_is_unproven(tmp_path):
    result = judge(by_id("nothing-comparable"), tmp_path)
    assert result.verdict is Verdict.UNPROVEN
    assert "nothing comparable" in " ".join(result.devices[0].reasons)


def test_exit_zero_after_the_work_compares_the_state(tmp_path):
    result = judge(by_id("target-exits-zero-after-its-work"), tmp_path)
    d = result.devices[0]
    assert d.original.status == "inplace-error" and d.rewritten.status == "exited"
    assert d.compared.grads >= 2 and d.compared.state >= 2


runner = CliRunner()


def test_cli_exit_codes_and_json_keep_the_targets_output_out(tmp_path):
    right = by_id("target-prints")
    model = materialise(right, tmp_path)
    fixed = tmp_path / "fixed.py"
    fixed.write_text(right.rewritten())
    ok = runner.invoke(app, ["verify", f"{model}::fn", "--rewritten", str(fixed), "--device", "cpu",
                             "--format", "json"])
    assert ok.exit_code == 0, ok.stdout
    doc = json.loads(ok.stdout)
    assert doc["verdict"] == "verified" and doc["devices"][0]["compared"]["grads"] >= 1
    assert "hello from the target" in doc["devices"][0]["captured_output"]["rewritten"]["stdout"]
    text = runner.invoke(app, ["verify", f"{model}::fn", "--rewritten", str(fixed), "--device", "cpu"])
    assert text.exit_code == 0 and "Verified." in text.stdout and "hello from the target" in text.stdout

    wrong = by_id("rewrite-exits-before-its-work")
    model = materialise(wrong, tmp_path)
    fixed.write_text(wrong.rewritten())
    bad = runner.invoke(app, ["verify", f"{model}::fn", "--rewritten", str(fixed), "--device", "cpu"])
    assert bad.exit_code == 1 and "NOT verified." in bad.stdout and "device" in bad.stdout

    unproven = by_id("leaf-read-before-update-is-unproven")
    model = materialise(unproven, tmp_path)
    fixed.write_text(unproven.rewritten())
    doc = runner.invoke(app, ["verify", f"{model}::fn", "--rewritten", str(fixed), "--device", "cpu",
                              "--format", "json"])
    assert doc.exit_code == 1 and json.loads(doc.stdout)["verdict"] == "unproven"


def test_cli_timeout_and_zero_tolerances(tmp_path):
    case = by_id("explicit-zero-tolerance-honoured")
    model = materialise(case, tmp_path)
    fixed = tmp_path / "fixed.py"
    fixed.write_text(case.rewritten())
    loose = runner.invoke(app, ["verify", f"{model}::fn", "--rewritten", str(fixed), "--device", "cpu"])
    strict = runner.invoke(app, ["verify", f"{model}::fn", "--rewritten", str(fixed), "--device", "cpu",
                                 "--rtol", "0", "--atol", "0", "--timeout", "30"])
    assert loose.exit_code == 0, loose.stdout  # within float64's default tolerance
    assert strict.exit_code == 1, strict.stdout


CUDA_CASES = [by_id(i) for i in ("sgd-update-becomes-a-dead-rebind", "ema-buffer-update-becomes-a-dead-store",
                                 "rewrite-turns-grad-off-for-everyone", "second-call-changed")]
CUDA_RIGHT = [by_id(i) for i in ("h-equals-b-plus-h", "module-level-model", "ema-rewritten-as-copy",
                                 "target-prints")]


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
@pytest.mark.parametrize("case", CUDA_CASES + CUDA_RIGHT, ids=lambda c: c.id)
def test_cuda_takes_the_same_path(case, tmp_path):
    model = materialise(case, tmp_path)
    result = verify(f"{model}::{case.name}", rewritten_source=case.rewritten(), devices=["cpu", "cuda"],
                    **(case.options or {}))
    expected = Verdict.VERIFIED if case in CUDA_RIGHT else Verdict.NOT_VERIFIED
    assert [d.verdict for d in result.devices] == [expected, expected], explain(result)
    cuda = result.devices[1]
    assert cuda.rewritten.cost.peak_cuda_bytes is not None
