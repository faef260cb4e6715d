"""What ``inplacefix run`` costs on a working training script: wall time of
``python train_ok.py ARGS`` against ``inplacefix run train_ok.py ARGS`` (goal: at most 1.3x).

Both are timed end to end (interpreter start, torch import, the training, exit), alternating,
after one warm-up of each; the median of ``--repeat`` runs is reported, in wall seconds and in
CPU seconds (user + system, every process: on a busy machine the CPU figure is the steadier). The script is
fixtures/scripts/working/train_ok.py (an MLP, Adam, ``--steps`` steps).
Usage: ``python bench/run_overhead.py [--repeat 5] [--steps 300] [--hidden 256] [--batch 64] [--threads N]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
HERE = ROOT / "fixtures" / "scripts" / "working"


def timed(command) -> tuple:
    """(wall seconds, CPU seconds of the process and its children)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "ignore"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=HERE, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr}")
    return seconds, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--threads", type=int, default=None,
                        help="OMP_NUM_THREADS for both runs (default: torch's own choice)")
    args = parser.parse_args()
    if args.threads:
        os.environ["OMP_NUM_THREADS"] = str(args.threads)
    script = ["train_ok.py", "--steps", str(args.steps), "--hidden", str(args.hidden), "--batch", str(args.batch)]
    plain_cmd = [sys.executable, *script]
    run_cmd = [sys.executable, "-m", "codemod", "run", *script]
    timed(plain_cmd), timed(run_cmd)  # warm the file cache
    plain, located = [], []
    for _ in range(args.repeat):
        plain.append(timed(plain_cmd))
        located.append(timed(run_cmd))
    for i, what in ((0, "wall"), (1, "CPU")):
        p = statistics.median(t[i] for t in plain)
        r = statistics.median(t[i] for t in located)
        print(f"train_ok.py {' '.join(script[1:])}: {what} python {p:.2f} s, inplacefix run {r:.2f} s, "
              f"ratio {r / p:.2f}x (median of {args.repeat}; goal <= 1.3x)")


if __name__ == "__main__":
    main()
