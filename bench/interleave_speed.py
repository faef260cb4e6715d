"""Old against new, interleaved: the speed of two checkouts of inplacefix on one tree, with
libcst's parse + print (the floor of ``bench/repo_speed.py``) measured in the same rounds.

On a shared machine single samples vary widely, so each round runs one command of each version
in turn (the order alternating from round to round), and the medians are compared. CPU seconds
(user + sys of the child) with ratios to the floor; cold runs (``--no-cache``, ``-j 1``).
With ``--calls``, each version's function calls under cProfile, once per mode (a count the
machine's load does not change).

    python bench/interleave_speed.py OLD_CHECKOUT NEW_CHECKOUT [--repeat 5] [--tree DIR] [--calls]

Default tree: a copy of torch/{nn,optim,autograd,distributions}, as ``bench/repo_speed.py`` makes.
"""

from __future__ import annotations

import os
import pathlib
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

FLOOR = (
    "import libcst, pathlib, sys\n"
    "for p in sorted(pathlib.Path(sys.argv[1]).rglob('*.py')):\n"
    "    try:\n"
    "        assert libcst.parse_module(p.read_bytes()).bytes is not None\n"
    "    except libcst.ParserSyntaxError:\n"
    "        pass\n"
)
MODES = {
    "check": ["check"],
    "check --select ALL": ["check", "--select", "ALL"],
    "fix --diff --select ALL": ["fix", "--diff", "--select", "ALL"],
}
CALLS = (
    "import cProfile, pstats, runpy, sys\n"
    "sys.argv = ['codemod'] + sys.argv[1:]\n"
    "p = cProfile.Profile()\n"
    "try:\n"
    "    p.runcall(runpy.run_module, 'codemod', run_name='__main__')\n"
    "except SystemExit:\n"
    "    pass\n"
    "print('CALLS', pstats.Stats(p).total_calls, file=sys.stderr)\n"
)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # (bytecode cached: both alike)


def cpu(cmd, cwd, env) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv) -> None:
    old, new = (str(pathlib.Path(a).resolve()) for a in argv[:2])
    repeat = int(argv[argv.index("--repeat") + 1]) if "--repeat" in argv else 5
    scratch = None
    if "--tree" in argv:
        tree = pathlib.Path(argv[argv.index("--tree") + 1]).resolve()
    else:
        import torch

        scratch = pathlib.Path(tempfile.mkdtemp())
        tree = scratch / "torch_tree"
        for sub in ("nn", "optim", "autograd", "distributions"):
            shutil.copytree(pathlib.Path(torch.__file__).parent / sub, tree / sub,
                            ignore=shutil.ignore_patterns("__pycache__"))
    versions = {"old": old, "new": new}
    envs = {name: {**ENV, "PYTHONPATH": path} for name, path in versions.items()}
    run = {name: [sys.executable, "-m", "codemod"] for name in versions}
    tail = ["--no-cache", "-j", "1", "--no-progress", str(tree)]
    for name in versions:  # bytecode caches, once, untimed
        subprocess.run(run[name] + ["check"] + tail, cwd=tree, env=envs[name], capture_output=True)
    samples = {"floor": []}
    samples.update({f"{v} {m}": [] for m in MODES for v in versions})
    for r in range(repeat):
        samples["floor"].append(cpu([sys.executable, "-c", FLOOR, str(tree)], tree, ENV))
        for mode, args in MODES.items():
            order = list(versions) if r % 2 == 0 else list(reversed(list(versions)))
            for v in order:
                samples[f"{v} {mode}"].append(cpu(run[v] + args + tail, tree, envs[v]))
        print(f"round {r + 1}: " + ", ".join(f"{k} {s[-1]:.2f}" for k, s in samples.items()), flush=True)
    floor = statistics.median(samples["floor"])
    files = len(list(tree.rglob("*.py")))
    print(f"\n{files} files; median of {repeat} interleaved rounds; CPU s (user + sys)")
    print(f"{'':34} {'CPU s':>7} {'x floor':>8}   samples")
    for name, s in samples.items():
        m = statistics.median(s)
        print(f"{name:34} {m:7.2f} {m / floor:8.3f}   {' '.join(f'{x:.2f}' for x in s)}")
    for mode in MODES:
        o, n = statistics.median(samples[f"old {mode}"]), statistics.median(samples[f"new {mode}"])
        print(f"{mode:34} new/old {n / o:.3f}")
    if "--calls" in argv:
        for mode, args in MODES.items():
            counts = {}
            for v in versions:
                done = subprocess.run([sys.executable, "-c", CALLS, *args, *tail], cwd=tree, env=envs[v],
                                      capture_output=True, text=True)
                counts[v] = int(done.stderr.rsplit("CALLS", 1)[1].split()[0])
            print(f"function calls, {mode:26} old {counts['old']:,} new {counts['new']:,} "
                  f"({counts['new'] / counts['old']:.3f})")
    if scratch is not None:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
