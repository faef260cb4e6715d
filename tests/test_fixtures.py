"""The fixtures are the spec: one parametrized test walks them all.

For each ``fixtures/<rule>/<case>.in.py`` (``codemod.testing`` finds them): ``<case>.out.py`` is what ``inplacefix fix`` makes of
it, ``<case>.unsafe.out.py`` (only where different) what ``fix --unsafe-fixes`` makes, and
``<case>.findings`` what ``check --show-skipped`` reports. ``pytest --update-fixtures``
rewrites them from the current output; review that diff like code.
"""

from __future__ import annotations

import pytest

from codemod.engine.pipeline import process_source
from codemod.rules.registry import rules
from codemod.testing import SAFE, UNSAFE, expected, rule_cases, rule_folders

CASES = rule_cases()


def case_id(path):
    return f"{path.parent.name}/{path.name[:-len('.in.py')]}"


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


@pytest.mark.parametrize("folder", rule_folders(), ids=lambda p: p.name)
def test_each_rule_has_enough_cases_on_both_sides(folder):
    cases = sorted(folder.glob("*.in.py"))
    unchanged = [c for c in cases if c.with_name(c.name.replace(".in.py", ".out.py")).read_bytes() == c.read_bytes()]
    assert len(cases) >= 15
    assert len(unchanged) * 2 >= len(cases), "half of the cases must be negative"
    assert len(unchanged) < len(cases), "and some positive"


def test_every_rule_has_a_fixture_folder():
    missing = [d.name for d in rule_folders() if not d.is_dir()]
    assert not missing, f"rules without a fixture folder: {missing}"


def test_every_rule_code_is_reported_by_its_fixtures():
    codes_seen = set()
    for path in CASES:
        codes_seen.update(line.split()[1] for line in (path.with_name(path.name.replace(".in.py", ".findings"))).read_text().splitlines() if line and not line.startswith(" "))
    assert {p.CODE for p in rules()} <= codes_seen
