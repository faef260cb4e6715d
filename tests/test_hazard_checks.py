"""The harness of ``bench/hazard_checks`` (the drivers that decide precision labels by running the
real libraries) on plain torch, so that it runs where those libraries are not installed: a write into
a saved tensor and the leaf error are reported by kind, stopping right after a line isolates that
line's write, any other error ends the driver instead of reading as "did not raise", and
``hazard_precision.py checks`` sees a label that disagrees with its driver."""

from __future__ import annotations

import importlib.util
import sys

import pytest
import torch

from .conftest import FIXTURES

BENCH = FIXTURES.parent / "bench"


def _load(name: str, path):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _saved_then_written(x):  # type: ignore[no-untyped-def]
    y = x.sigmoid()  # SigmoidBackward saves y
    y.mul_(2)  # the flagged write: line +2 of this def
    return y.sum()


def test_drivers_report_what_torch_raised(capsys):  # type: ignore[no-untyped-def]
    check = _load("_check", BENCH / "hazard_checks" / "_check.py")
    bench = _load("hazard_precision", BENCH / "hazard_precision.py")
    first = _saved_then_written.__code__.co_firstlineno
    check.expect_line(_saved_then_written, first + 2, "y.mul_(2)")
    with pytest.raises(SystemExit):  # another version of the code: the driver stops
        check.expect_line(_saved_then_written, first + 2, "y.add_(2)")

    def leaf():  # type: ignore[no-untyped-def]
        torch.zeros(2, requires_grad=True).add_(1)

    finding = "lib/module.py:3:IPF103"
    assert check.attempt(finding, "path", "write after the sigmoid",
                         lambda: _saved_then_written(torch.randn(3, requires_grad=True)).backward()) \
        == "saved-tensor-modified"
    assert check.attempt(finding, "control", "stopped before the write", lambda: check.run_through(
        _saved_then_written, first + 1, torch.randn(3, requires_grad=True))["y"].sum().backward()) is None
    assert check.attempt(finding, "context", "a leaf", leaf) == "leaf"
    assert check.attempt(finding, "context", "refused set-up", lambda: int("x"), expected=(ValueError,)) \
        == "ValueError"
    with pytest.raises(RuntimeError):  # not an in-place error: a broken driver, not "did not raise"
        check.attempt(finding, "path", "broken", lambda: torch.ones(2) @ torch.ones(3))
    with pytest.raises(SystemExit):  # the line never ran
        check.run_through(_saved_then_written, first + 40, torch.randn(3))

    outcomes = bench.read_outcomes(capsys.readouterr().out)
    assert [(o.role, o.raised) for o in outcomes] == [
        ("path", "saved-tensor-modified"), ("control", None), ("context", "leaf"), ("context", "ValueError")]

    def label(value):  # type: ignore[no-untyped-def]
        return {finding: bench.Label(finding, "torch.nn", value, "-", "checked with torch", "")}

    assert bench.verdicts(outcomes, label("real")) == []
    assert bench.verdicts(outcomes, label("false")) == [f"{finding}: labelled false, but the path raised"]
    raised_control = [o if o.role != "control" else bench.Outcome(finding, "control", "c", "leaf", "") for o in outcomes]
    assert bench.verdicts(raised_control, label("real")) == [f"{finding}: control raised: c"]


def test_checks_says_unknown_without_a_count(tmp_path):  # type: ignore[no-untyped-def]
    """Without count's findings file, ``checks`` cannot tell whether a finding is reported now: it
    says so, never "no" (which reads as "the tool no longer reports it")."""
    bench = _load("hazard_precision", BENCH / "hazard_precision.py")
    finding = "lib/module.py:3:IPF103"
    missing = tmp_path / "findings.json"
    assert bench.reported_text(finding, str(missing)).startswith("unknown")
    missing.write_text('{"versions": {}, "hazards": [{"id": "lib/module.py:3:IPF203", "codebase": "timm", '
                       '"message": "m"}]}')
    assert bench.reported_text(finding, str(missing)) == "possible IPF203"
    assert bench.reported_text("lib/module.py:4:IPF103", str(missing)) == "no"
