"""Fixtures as a spec, read one way by the tests, scripts and benchmarks.

``fixtures/<rule>/<case>.in.py`` is a rule's fixture (``<rule>`` is the rule module's name in
``codemod/rules/``): ``<case>.out.py`` is what ``fix`` makes of it, ``<case>.unsafe.out.py``
(only where different) what ``fix --unsafe-fixes`` makes, ``<case>.findings`` what
``check --show-skipped`` reports. Model, script and notebook fixtures live in folders of their
own. Every fixture may open with header lines ``# key: value`` (``# runtime: needs-unsafe-fixes``,
``# verify: Model``, ``# expect: broken``) saying how to build and run it.

This module sits above every layer (it renders findings as ``report`` does); nothing in the
tool imports it.
"""

from __future__ import annotations

import dataclasses
import pathlib
import random
from typing import Dict, List, Optional

from codemod.config import Settings
from codemod.engine.pipeline import fix_source, source_with_fixes
from codemod.frontends.report import snapshot
from codemod.rules.registry import rules

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SAFE = Settings(select=("ALL",))  # rule fixtures show every candidate, hazard or not
UNSAFE = dataclasses.replace(SAFE, unsafe_fixes=True)


def headers(path: pathlib.Path) -> Dict[str, str]:
    """The leading ``# key: value`` lines of a fixture."""
    found: Dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("# ") or ":" not in line:
            break
        key, _, value = line[2:].partition(":")
        found[key.strip()] = value.strip()
    return found


MODELS = sorted((FIXTURES / "models").glob("*.py"))  # broken and working models (# verify: Target)
# What the fuzz tests mutate: every rule fixture's input and every model.
FUZZ_CORPUS = sorted(FIXTURES.glob("*/*.in.py")) + MODELS


def run_model(path: pathlib.Path, devices=("cpu",)):
    """(headers, ``verify`` result) of a model fixture, run as its headers say (imports torch)."""
    from codemod.runtime.verify import verify

    h = headers(path)
    settings = dataclasses.replace(Settings(), unsafe_fixes=h.get("fix") == "--unsafe-fixes")
    return h, verify(f"{path}::{h['verify']}", settings=settings, devices=list(devices))


def mutate(text: str, rng: random.Random) -> str:
    """``text`` with one to four lines dropped, doubled, swapped or re-indented (fuzzing)."""
    lines = text.splitlines(keepends=True)
    for _ in range(rng.randint(1, 4)):
        if not lines:
            break
        i = rng.randrange(len(lines))
        op = rng.choice(["drop", "dup", "swap", "indent", "dedent"])
        if op == "drop":
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        elif op == "swap" and i + 1 < len(lines):
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
        elif op == "indent":
            lines[i] = "    " + lines[i]
        elif op == "dedent" and lines[i].startswith("    "):
            lines[i] = lines[i][4:]
    return "".join(lines)


def rule_folder(rule) -> str:
    """The fixture folder of a rule: its module's name (``augmented_assignment``)."""
    return rule.__module__.rsplit(".", 1)[-1]


def rule_folders(fixtures: pathlib.Path = FIXTURES) -> List[pathlib.Path]:
    """The fixture folder of every registered rule, in code order (missing ones included)."""
    return [fixtures / rule_folder(r) for r in rules()]


def rule_cases(fixtures: pathlib.Path = FIXTURES) -> List[pathlib.Path]:
    """Every ``<case>.in.py`` of every registered rule."""
    return sorted(p for d in rule_folders(fixtures) for p in d.glob("*.in.py"))


def case_name(path: pathlib.Path) -> str:
    return path.name[: -len(".in.py")]


def expected(path: pathlib.Path) -> Dict[str, Optional[str]]:
    """What the tool makes of a rule fixture: expected file name -> content (None: the file
    must not exist)."""
    data = path.read_bytes()
    case = case_name(path)
    safe = source_with_fixes(data, path.name, SAFE)
    unsafe = fix_source(data, path.name, UNSAFE)
    if safe.error is not None or unsafe.error is not None:
        raise AssertionError(str(safe.error or unsafe.error))
    original = data.decode("utf-8")
    safe_text = safe.fixed if safe.changed else original
    unsafe_text = unsafe.fixed if unsafe.changed else original
    return {
        f"{case}.out.py": safe_text,
        f"{case}.unsafe.out.py": unsafe_text if unsafe_text != safe_text else None,
        f"{case}.findings": snapshot(path.name, safe.findings),
    }


def mismatches(path: pathlib.Path) -> List[str]:
    """The expected files of a rule fixture that differ from (or are missing next to) it."""
    out = []
    for name, content in expected(path).items():
        target = path.parent / name
        if content is None:
            if target.exists():
                out.append(f"{name} should not exist: unsafe fixes change nothing more")
        elif not target.exists():
            out.append(f"{name} is missing (run pytest --update-fixtures)")
        elif target.read_text(encoding="utf-8") != content:
            out.append(f"{name} differs")
    return out
