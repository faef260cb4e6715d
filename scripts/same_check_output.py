"""Refactoring guard (issue 27): `inplacefix check --select ALL --output-format json` (and `fix --diff
--select ALL --unsafe-fixes`) over fixtures/ and bench/realworld/ must give byte-identical output before and
after a structural change.

    python scripts/same_check_output.py save before.json     # on the unchanged tree
    python scripts/same_check_output.py compare before.json  # after the change; exit 1 on any difference

Further code bases (paths, relative to the checkout or absolute) may follow the file name; they replace the
default targets, so that `save` and `compare` must be given the same ones.
"""

from __future__ import annotations

import difflib
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ("fixtures", "bench/realworld")


def check_output(targets=TARGETS) -> str:
    parts = []
    for target in targets:
        run = subprocess.run([sys.executable, "-m", "codemod", "check", "--select", "ALL", "--output-format",
                              "json", "--no-cache", target], cwd=ROOT, capture_output=True, text=True)
        parts.append(f"== {target} rc={run.returncode}\n{run.stdout}\n-- stderr\n{run.stderr}\n")
        run = subprocess.run([sys.executable, "-m", "codemod", "fix", "--diff", "--select", "ALL", "--unsafe-fixes",
                              "--no-cache", target], cwd=ROOT, capture_output=True, text=True)
        parts.append(f"== fix --diff {target} rc={run.returncode}\n{run.stdout}\n-- stderr\n{run.stderr}\n")
    return "".join(parts)


def main(argv: list) -> int:
    if len(argv) < 2 or argv[0] not in ("save", "compare"):
        print(__doc__)
        return 2
    mode, path, *targets = argv
    now = check_output(tuple(targets) or TARGETS)
    if mode == "save":
        Path(path).write_text(now)
        print(f"saved {len(now)} characters to {path}")
        return 0
    before = Path(path).read_text()
    if before == now:
        print(f"identical ({len(now)} characters)")
        return 0
    sys.stdout.writelines(difflib.unified_diff(before.splitlines(True), now.splitlines(True), "before", "after", n=1))
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
