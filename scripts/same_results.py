"""Results guard for speed work (issue 27): findings, fixes and reasons of `check`, `check --select ALL`
(JSON: each finding's status, reason and fix edits), `fix --diff` and `fix --diff --select ALL` over
code bases must stay byte-identical before and after a change that should change no result.

    python scripts/same_results.py save DIR [TARGET ...]     # on the unchanged tree
    python scripts/same_results.py compare DIR [TARGET ...]  # after the change; exit 1 on any difference

Targets: folders (absolute, or relative to the checkout); default: fixtures/, the nine real code bases
(torch's nn, optim, autograd, distributions; timm, torchvision, diffusers, kornia, transformers) in
``$REAL_SITE`` (default /work/venvs/real/lib/python3.11/site-packages). Each target is one run, as a
user would make it (its own project index). ``scripts/same_check_output.py`` is the older guard over
fixtures/ and bench/realworld/ (with ``--unsafe-fixes``).
"""

from __future__ import annotations

import difflib
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE = Path(os.environ.get("REAL_SITE", "/work/venvs/real/lib/python3.11/site-packages"))
REAL = ("torch/nn", "torch/optim", "torch/autograd", "torch/distributions", "timm", "torchvision", "diffusers",
        "kornia", "transformers")
MODES = {
    "check": ["check", "--output-format", "json"],
    "check-all": ["check", "--select", "ALL", "--output-format", "json"],
    "fix-diff": ["fix", "--diff"],
    "fix-diff-all": ["fix", "--diff", "--select", "ALL"],
}


def targets(given) -> list:
    return list(given) or ["fixtures", *(str(SITE / r) for r in REAL)]


def output(target: str, mode: str) -> str:
    run = subprocess.run([sys.executable, "-m", "codemod", *MODES[mode], "--no-cache", "-j", "1", "--no-progress",
                          target], cwd=ROOT, capture_output=True, text=True)
    return f"rc={run.returncode}\n{run.stdout}\n-- stderr\n{run.stderr}\n"


def name(target: str, mode: str) -> str:
    return f"{target.strip('/').replace('/', '_')}.{mode}.txt"


def counted(text: str, mode: str) -> int:
    """Findings (JSON modes) or diff lines (fix modes) compared in one output."""
    if mode.startswith("check"):
        body = text.split("\n", 1)[1].rsplit("\n-- stderr\n", 1)[0]
        try:
            return len(json.loads(body)["findings"])
        except ValueError:
            return 0
    body = text.split("\n", 1)[1].rsplit("\n-- stderr\n", 1)[0]
    return sum(1 for line in body.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---"))


def main(argv: list) -> int:
    if len(argv) < 2 or argv[0] not in ("save", "compare"):
        print(__doc__)
        return 2
    mode_, folder, *given = argv
    folder_path = Path(folder)
    folder_path.mkdir(parents=True, exist_ok=True)
    differ = 0
    for target in targets(given):
        for mode in MODES:
            now = output(target, mode)
            path = folder_path / name(target, mode)
            if mode_ == "save":
                path.write_text(now)
                print(f"{target} {mode}: saved ({counted(now, mode)} compared)", flush=True)
                continue
            before = path.read_text()
            same = before == now
            differ += not same
            print(f"{target} {mode}: {'identical' if same else 'DIFFERENT'} ({counted(now, mode)} compared)",
                  flush=True)
            if not same:
                sys.stdout.writelines(difflib.unified_diff(before.splitlines(True), now.splitlines(True),
                                                           "before", "after", n=1))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
