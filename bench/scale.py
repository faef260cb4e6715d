"""How `check` scales with the size of one module: time for 1k, 2k, 4k, 8k, 16k generated functions.

Each function holds one finding (an augmented assignment to a tensor saved for backward), so the
number of findings grows with the functions. A linear analysis doubles its time when the module
doubles; the figure that matters is the ratio per doubling (goal: at most 2.2).

    python bench/scale.py                 # 1k .. 16k
    python bench/scale.py --sizes 1000 2000 4000 --repeat 3

Each size runs `inplacefix check --no-cache` in a fresh process (the real command), best of
--repeat runs.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

FUNCTION = '''
def step_{i}(x):
    w = torch.ones(3, requires_grad=True)
    h = torch.sigmoid(w * x)
    h += {i}
    return h.sum()
'''


def module(n: int) -> str:
    return "import torch\n" + "".join(FUNCTION.format(i=i) for i in range(n))


def timed(path: pathlib.Path) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "codemod", "check", "--no-cache", "--select", "ALL", str(path)],
                          capture_output=True, text=True, cwd=path.parent)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"check failed on {path}: {done.stderr[-500:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 4000, 8000, 16000])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    root = pathlib.Path(__file__).resolve().parent.parent
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH")) if p)
    previous = None
    print(f"{'functions':>10} {'lines':>8} {'check s':>9} {'x previous':>11}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            path = pathlib.Path(tmp) / f"gen_{n}.py"
            text = module(n)
            path.write_text(text)
            best = min(timed(path) for _ in range(args.repeat))
            ratio = f"{best / previous:.2f}" if previous else "-"
            print(f"{n:>10} {text.count(chr(10)):>8} {best:>9.2f} {ratio:>11}", flush=True)
            previous = best


if __name__ == "__main__":
    main()
