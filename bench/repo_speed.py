"""Repository-scale speed, on torch's own Python sources (always there where torch is).

In one run, on a copy of torch/{nn,optim,autograd,distributions} (or, with ``--all``, of the
whole torch package: about 2,300 files and 1.2 million lines, the larger real code base):
libcst parse + print of every file (the floor any libcst tool pays), `inplacefix check`,
`inplacefix fix --diff` (and with ``--select ALL``, the migration mode), a warm rerun of `check` from the cache, `check -j 1` vs `-j 2`, and
Ruff for reference when it is on PATH. CPU seconds (user + sys of the child processes), median
of several runs, with ratios to the floor. The children may write bytecode caches (as any
installed tool does), whatever PYTHONDONTWRITEBYTECODE says here.
Usage: ``python bench/repo_speed.py [--repeat 3] [--all]``.
"""

from __future__ import annotations

import os
import pathlib
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import torch

FLOOR = (
    "import libcst, pathlib, sys\n"
    "for p in sorted(pathlib.Path(sys.argv[1]).rglob('*.py')):\n"
    "    try:\n"
    "        assert libcst.parse_module(p.read_bytes()).bytes is not None\n"
    "    except libcst.ParserSyntaxError:\n"
    "        pass\n"
)


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run(cmd, cwd) -> tuple:
    """(CPU seconds of the children, wall seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def main() -> None:
    repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 3
    whole = "--all" in sys.argv
    source = pathlib.Path(torch.__file__).parent
    tree = pathlib.Path(tempfile.mkdtemp()) / "torch_tree"
    if whole:
        # Under its own name: at the top of the tree, torch's random.py would shadow the
        # standard library for the processes run there.
        shutil.copytree(source, tree / "torch", ignore=shutil.ignore_patterns("*.so*", "*.pyc", "lib", "include", "bin"))
    else:
        for sub in ("nn", "optim", "autograd", "distributions"):
            shutil.copytree(source / sub, tree / sub)
    files = len(list(tree.rglob("*.py")))
    exe = [sys.executable, "-m", "codemod"]
    cases = {
        "libcst parse + print (floor)": [sys.executable, "-c", FLOOR, str(tree)],
        "inplacefix check": exe + ["check", "--no-cache", "-j", "1", "--no-progress", str(tree)],
        "inplacefix check --select ALL": exe + ["check", "--no-cache", "-j", "1", "--no-progress", "--select", "ALL", str(tree)],
        "inplacefix fix --diff": exe + ["fix", "--diff", "--no-cache", "-j", "1", "--no-progress", str(tree)],
        "inplacefix fix --diff --select ALL": exe + ["fix", "--diff", "--no-cache", "-j", "1", "--no-progress",
                                                     "--select", "ALL", str(tree)],
        "inplacefix check, warm cache": exe + ["check", "-j", "1", "--no-progress", str(tree)],
        "inplacefix check -j 2": exe + ["check", "--no-cache", "-j", "2", "--no-progress", str(tree)],
    }
    if shutil.which("ruff"):
        cases["ruff check (reference)"] = ["ruff", "check", "--no-cache", "--exit-zero", str(tree)]
    # One untimed run fills the cache (and the bytecode caches) for the warm case.
    subprocess.run(cases["inplacefix check, warm cache"], cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    results = {}
    for name, cmd in cases.items():
        samples = [run(cmd, tree) for _ in range(repeat)]
        results[name] = (statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples))
    floor = results["libcst parse + print (floor)"][0]
    lines = sum(p.read_bytes().count(b"\n") for p in tree.rglob("*.py"))
    what = "the whole package" if whole else "nn, optim, autograd, distributions"
    print(f"{files} files ({lines:,} lines) of torch {torch.__version__} ({what}); "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; median of {repeat}")
    print(f"{'':34} {'CPU s':>8} {'wall s':>8} {'x floor':>8}")
    for name, (cpu, wall) in results.items():
        print(f"{name:34} {cpu:8.2f} {wall:8.2f} {cpu / floor:8.2f}")
    j1 = results["inplacefix check"][1]
    j2 = results["inplacefix check -j 2"][1]
    print(f"-j 2 speed-up (wall): {j1 / j2:.2f}x")
    shutil.rmtree(tree.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
