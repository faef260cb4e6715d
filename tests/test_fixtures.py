"""The fixtures are the spec: one parametrized test walks them all.

For each ``fixtures/<pass>/<case>.in.py``: ``<case>.out.py`` is what ``inplacefix fix`` makes of
it, ``<case>.unsafe.out.py`` (only where different) what ``fix --unsafe-fixes`` makes, and
``<case>.findings`` what ``check --show-skipped`` reports. ``pytest --update-fixtures``
rewrites them from the current output; review that diff like code.
"""

from __future__ import annotations

import dataclasses

import pytest

from codemod.config import Settings
from codemod.engine.pipeline import process_source
from codemod.rules.registry import rules
from codemod.frontends.report import snapshot

from .conftest import FIXTURES

PASS_DIRS = ["augmented_assignment", "inplace_argument", "inplace_method", "subscript_assignment"]
CASES = sorted(p for d in PASS_DIRS for p in (FIXTURES / d).glob("*.in.py"))
SAFE = Settings(select=("ALL",))  # the pass fixtures show every candidate, hazard or not
UNSAFE = dataclasses.replace(SAFE, unsafe_fixes=True)


def case_id(path):
    return f"{path.parent.name}/{path.name[:-len('.in.py')]}"


def expected(path) -> dict:
    """Expected file name -> content (None: the file must not exist)."""
    data = path.read_bytes()
    case = path.name[: -len(".in.py")]
    safe = process_source(data, path.name, SAFE, fix=True, build_fixes=True)
    unsafe = process_source(data, path.name, UNSAFE, fix=True)
    assert safe.error is None and unsafe.error is None, safe.error or unsafe.error
    original = data.decode("utf-8")
    safe_text = safe.fixed if safe.changed else original
    unsafe_text = unsafe.fixed if unsafe.changed else original
    return {
        f"{case}.out.py": safe_text,
        f"{case}.unsafe.out.py": unsafe_text if unsafe_text != safe_text else None,
        f"{case}.findings": snapshot(path.name, safe.findings),
    }


@pytest.mark.parametrize("path", CASES, ids=case_id)
def test_fixture(path, update_fixtures):
    for name, content in expected(path).items():
        target = path.parent / name
        if update_fixtures:
            if content is None:
                target.unlink(missing_ok=True)
            else:
                target.write_text(content, encoding="utf-8")
            continue
        if content is None:
            assert not target.exists(), f"{name} should not exist: unsafe fixes change nothing more"
        else:
            assert target.exists(), f"{name} is missing (run pytest --update-fixtures)"
            assert target.read_text(encoding="utf-8") == content, name


@pytest.mark.parametrize("path", CASES, ids=case_id)
def test_second_run_changes_nothing(path):
    case = path.name[: -len(".in.py")]
    for name, settings in ((f"{case}.out.py", SAFE), (f"{case}.unsafe.out.py", UNSAFE)):
        target = path.parent / name
        if target.exists():
            again = process_source(target.read_bytes(), name, settings, fix=True)
            assert again.error is None
            assert not again.changed, f"a second run of {name} changed:\n{again.fixed}"


@pytest.mark.parametrize("folder", PASS_DIRS)
def test_each_pass_has_enough_cases_on_both_sides(folder):
    cases = sorted((FIXTURES / folder).glob("*.in.py"))
    unchanged = [c for c in cases if c.with_name(c.name.replace(".in.py", ".out.py")).read_bytes() == c.read_bytes()]
    assert len(cases) >= 15
    assert len(unchanged) * 2 >= len(cases), "half of the cases must be negative"
    assert len(unchanged) < len(cases), "and some positive"


def test_every_pass_has_a_fixture_folder():
    codes_seen = set()
    for path in CASES:
        codes_seen.update(line.split()[1] for line in (path.with_name(path.name.replace(".in.py", ".findings"))).read_text().splitlines() if line and not line.startswith(" "))
    assert {p.CODE for p in rules()} <= codes_seen
