"""The pytest plugin, run through ``pytester``: opt-in only, and when on, a test that dies of the
in-place error gets both lines and the suggested fix in its report."""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest

pytest.importorskip("torch")

pytest_plugins = ["pytester"]

# With the package installed (pip install -e .), pytest loads the plugin by its entry point in
# every run; without, it is loaded by module name so the behaviour can still be tested.
INSTALLED = any(e.name == "inplacefix" for e in entry_points(group="pytest11"))
LOAD = [] if INSTALLED else ["-p", "codemod.frontends.pytest_plugin"]

TESTS = '''
import torch


def test_broken():
    w = torch.ones(3, requires_grad=True)
    y = torch.sigmoid(w)
    y *= 2
    y.sum().backward()


def test_other_failure():
    assert torch.ones(1).item() == 2


def test_fine():
    w = torch.ones(3, requires_grad=True)
    (w * 2).sum().backward()
    assert w.grad.tolist() == [2.0, 2.0, 2.0]
'''

SECTION = "inplacefix: where the in-place error comes from"


def _report(pytester, *args):
    pytester.makepyfile(test_model=TESTS)
    result = pytester.runpytest(*LOAD, *args)
    result.assert_outcomes(passed=1, failed=2)
    return result.stdout.str()


def _section(out: str) -> str:
    assert SECTION in out, out
    return out.split(SECTION, 1)[1].split("test_other_failure")[0]


def _assert_both_lines_and_fix(out: str) -> None:
    section = _section(out)
    assert "saved    test_model.py:6: y = torch.sigmoid(w)  [sigmoid, output]" in section
    assert "modified test_model.py:7: y *= 2  [mul_]" in section
    assert "+    y = y * 2" in section  # the suggested fix, as a diff
    assert out.count(SECTION) == 1  # not on the other failure


def test_installed_but_not_enabled_changes_nothing(pytester):
    out = _report(pytester)
    assert SECTION not in out and "found by inplacefix's locator" not in out  # torch's own error
    assert "is at version 1; expected version 0" in out
    config = pytester.parseconfig(*LOAD)
    assert not config.pluginmanager.has_plugin("inplacefix-locator")


def test_enabled_with_the_flag(pytester):
    _assert_both_lines_and_fix(_report(pytester, "--inplacefix"))


def test_enabled_with_the_ini_option(pytester):
    pytester.makeini("[pytest]\ninplacefix = true\n")
    _assert_both_lines_and_fix(_report(pytester))


@pytest.mark.skipif(not INSTALLED, reason="needs the package installed (its pytest11 entry point)")
def test_enabled_with_dash_p(pytester):
    _assert_both_lines_and_fix(_report(pytester, "-p", "inplacefix"))
