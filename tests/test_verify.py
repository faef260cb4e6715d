"""The verification harness, on every model fixture and on rewrites that must be caught."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

from typer.testing import CliRunner  # noqa: E402

from codemod.frontends.cli import app  # noqa: E402
from codemod.config import Settings  # noqa: E402
from codemod.runtime.verify import HarnessError, verify  # noqa: E402

from .conftest import FIXTURES  # noqa: E402

from codemod.testing import MODELS, headers, run_model  # noqa: E402


def test_fixture_counts():
    expects = [headers(p)["expect"] for p in MODELS]
    assert expects.count("broken") >= 20 and expects.count("working") >= 5


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_model_fixture_verifies(path):
    h, result = run_model(path)
    report = result.devices[0]
    assert result.verified, "\n".join(report.problems + result.problems)
    assert report.compared.outputs >= 1 and report.compared.calls[:3] == ["train call 1", "train call 2", "eval call"] \
        or not h["verify"][0].isupper()
    if h["expect"] == "broken":
        assert report.original.status == "inplace-error", report.original.error
        assert result.fixes_applied >= 1
        leaf = "leaf Variable" in report.original.error
        assert report.reference == ("no-grad meaning" if leaf else "oracle")
        if not leaf:
            assert report.comparison.grad_abs is not None and report.comparison.grad_abs <= 1e-6
    else:
        assert report.original.ok and report.reference == "original"
        if result.fixes_applied == 0:  # nothing rewritten: the same kernels ran, bit for bit
            assert report.comparison.output_abs == 0.0 and report.comparison.grad_abs == 0.0
        # else a rewrite may run other kernels, whose last bits depend on the CPU: verify's own
        # dtype tolerance (``result.verified`` above) is the check


BLOG = FIXTURES / "models" / "blog_alias.py"


def test_a_rewrite_that_breaks_the_alias_is_caught(tmp_path):
    wrong = tmp_path / "blog_alias.py"
    text = BLOG.read_text()
    text = text.replace("b += 1", "b = b + 1").replace("b *= c + a", "b = b * (c + a)")
    text = text.replace("d = b.exp_()", "d = b = b.exp()").replace("d *= 5", "d = d * 5")
    wrong.write_text(text)
    result = verify(f"{BLOG}::example", rewritten=str(wrong), devices=["cpu"])
    assert not result.verified
    assert result.verdict.value == "not verified"
    assert any("grad" in d.where for d in result.devices[0].differences)
    # and the tool's own (unsafe) rewrite, which rebinds `b` too, is right:
    right = verify(f"{BLOG}::example", settings=Settings(unsafe_fixes=True), devices=["cpu"])
    assert right.verified


def test_a_rewrite_that_changes_a_constant_is_caught(tmp_path):
    path = FIXTURES / "models" / "exp_plus_constant.py"
    wrong = tmp_path / "exp_plus_constant.py"
    wrong.write_text(path.read_text().replace("h += 1.0", "h = h + 1.01"))
    result = verify(f"{path}::ExpBlock", rewritten=str(wrong), devices=["cpu"])
    assert not result.verified
    assert any("output" in d.where and "values differ" in d.what for d in result.devices[0].differences)


def test_a_rewrite_that_still_fails_is_not_verified():
    path = FIXTURES / "models" / "residual_sigmoid_add.py"  # needs an unsafe fix
    result = verify(f"{path}::GatedResidual", devices=["cpu"])
    assert not result.verified
    assert result.devices[0].rewritten.status == "inplace-error"


def test_functionalize_cross_checks_the_oracle():
    path = FIXTURES / "models" / "exp_plus_constant.py"
    result = verify(f"{path}::ExpBlock", devices=["cpu"])
    assert result.devices[0].oracle_crosscheck == "max abs 0"


def test_the_cross_check_draws_what_the_first_call_drew():
    # In-place dropout: the functionalize run must draw the first train call's mask (it drew
    # another seed's and disagreed by 2.13 beside a "Verified.").
    path = FIXTURES / "models" / "dropout_inplace_after_softmax.py"
    result = verify(f"{path}::DropAttention", devices=["cpu"], settings=Settings(unsafe_fixes=True))
    assert result.devices[0].oracle_crosscheck == "max abs 0"
    assert result.verified


def test_float64_mode_and_cli_options(tmp_path):
    path = FIXTURES / "models" / "residual_sigmoid_add.py"
    result = verify(f"{path}::GatedResidual", settings=Settings(unsafe_fixes=True), devices=["cpu"],
                    float64=True, init_kwargs={"dim": 3}, input_shapes=[(2, 3)])
    assert result.verified
    assert result.devices[0].original.status == "inplace-error"


def test_harness_errors():
    with pytest.raises(HarnessError):
        verify("no_such_file.py::f")
    with pytest.raises(HarnessError):
        verify(f"{BLOG}::missing")
    with pytest.raises(HarnessError):
        verify(str(BLOG))


runner = CliRunner()


def test_cli_exit_codes_and_json():
    ok = runner.invoke(app, ["verify", f"{BLOG}::example", "--unsafe-fixes", "--device", "cpu"])
    assert ok.exit_code == 0 and "Verified." in ok.stdout
    # Only a rule that does not fire there: nothing is rewritten, the original's error stays.
    bad = runner.invoke(app, ["verify", f"{BLOG}::example", "--select", "IPF002", "--device", "cpu",
                              "--format", "json"])
    assert bad.exit_code == 1
    doc = json.loads(bad.stdout)
    assert doc["verified"] is False and doc["devices"][0]["original"]["status"] == "inplace-error"
    missing = runner.invoke(app, ["verify", f"{BLOG}::nope"])
    assert missing.exit_code == 2


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_model_fixture_verifies_on_cuda(path):
    h, result = run_model(path, devices=("cpu", "cuda"))
    problems = [p for d in result.devices for p in d.problems] + result.problems
    assert result.verified, "\n".join(problems)
    if h["verify"][0].isupper():  # a module target: compared across devices, or told why not
        assert result.cross_device is not None or result.cross_device_note
