"""A longer fuzz run than the test suite's: counts programs, crashes, unparsable outputs and
non-idempotent outputs. Usage: ``python bench/fuzz.py [--generated 500] [--mutated 500]``."""

from __future__ import annotations

import ast
import pathlib
import random
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import hypothesmith  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402

from codemod.config import Settings  # noqa: E402
from codemod.engine.pipeline import process_source  # noqa: E402
from codemod.testing import FUZZ_CORPUS as CORPUS, mutate  # noqa: E402

EVERYTHING = Settings(select=("ALL",), unsafe_fixes=True)
counts = {"programs": 0, "rewritten": 0, "crashes": 0, "unparsable outputs": 0, "not idempotent": 0}
examples = []


def run_one(data: bytes, name: str) -> None:
    counts["programs"] += 1
    try:
        result = process_source(data, name, EVERYTHING, fix=True, edits=True)
    except Exception as exc:  # noqa: BLE001 - counting crashes is the point
        counts["crashes"] += 1
        examples.append((name, repr(exc), data[:200]))
        return
    if result.error is not None and result.error.message.startswith("internal error"):
        counts["unparsable outputs"] += 1
        examples.append((name, result.error.message, data[:200]))
        return
    if not result.changed:
        return
    counts["rewritten"] += 1
    try:
        ast.parse(result.fixed)
    except SyntaxError:
        counts["unparsable outputs"] += 1
        return
    if process_source(result.fixed.encode(), name, EVERYTHING, fix=True).changed:
        counts["not idempotent"] += 1
        examples.append((name, "not idempotent", data[:200]))


def main() -> None:
    generated = int(sys.argv[sys.argv.index("--generated") + 1]) if "--generated" in sys.argv else 500
    mutated = int(sys.argv[sys.argv.index("--mutated") + 1]) if "--mutated" in sys.argv else 500

    @settings(max_examples=generated, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(hypothesmith.from_node())
    def fuzz(source):
        run_one(("import torch\n" + source).encode("utf-8"), "generated.py")

    fuzz()
    rng = random.Random(0)
    for _ in range(mutated):
        path = rng.choice(CORPUS)
        run_one(mutate(path.read_text(), rng).encode("utf-8"), path.name)
    for key, value in counts.items():
        print(f"{key:20} {value}")
    for example in examples[:5]:
        print(example)


if __name__ == "__main__":
    main()
