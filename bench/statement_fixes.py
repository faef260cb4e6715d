"""Fixes built statement by statement (``fixes.statements``) against the whole-module way.

For every ``.py`` file under the given folders (default: torch's nn, optim, autograd and
distributions), ``fix --select ALL --unsafe-fixes`` in one process both ways: the texts must be
byte-identical, and so must the findings' fix states. Prints how many files took the statement
way, how many went back to the whole module, and the CPU seconds of each way.
Usage: ``python bench/statement_fixes.py [FOLDER ...]``.
"""

from __future__ import annotations

import pathlib
import sys
import time

from codemod.config import Settings
from codemod.engine import pipeline
from codemod.fixes import statements


def _run(paths, settings, whole: bool):
    real = statements.statement_fixes
    used = [0, 0]  # files fixed by statement, files that went back to the whole module

    def counted(*args):
        found = real(*args)
        used[found is None] += 1
        return found

    statements.statement_fixes = (lambda *args: None) if whole else counted
    try:
        start = time.process_time()
        out = {}
        for p in paths:
            r = pipeline.process_source(p.read_bytes(), str(p), settings, fix=True)
            out[p] = (r.fixed_bytes, r.error and r.error.message,
                      [(f.code, f.span.line, f.span.column, f.fixable, f.fix_title) for f in r.findings],
                      [(f.code, f.span.line) for f in r.applied])
        return out, time.process_time() - start, used
    finally:
        statements.statement_fixes = real


def main() -> int:
    folders = [pathlib.Path(a) for a in sys.argv[1:]]
    if not folders:
        import torch

        root = pathlib.Path(torch.__file__).parent
        folders = [root / s for s in ("nn", "optim", "autograd", "distributions")]
    paths = sorted(p for f in folders for p in (f.rglob("*.py") if f.is_dir() else [f]))
    settings = Settings(select=("ALL",), unsafe_fixes=True)
    pipeline.tune_gc(one_shot=True)  # a batch run, as the CLI
    _run(paths[:5], settings, True)  # imports
    whole, t_whole, _ = _run(paths, settings, True)
    each, t_each, used = _run(paths, settings, False)
    differ = [p for p in paths if whole[p] != each[p]]
    changed = sum(1 for p in paths if whole[p][0] is not None)
    print(f"{len(paths)} files, {changed} fixed; by statement: {used[0]} files, back to the whole module: "
          f"{used[1]}; CPU s (analysis included): whole {t_whole:.2f}, by statement {t_each:.2f}")
    for p in differ:
        print(f"DIFFERENT: {p}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
