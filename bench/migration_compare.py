"""Migration check over real libraries: does ``inplacefix fix --select ALL`` (and again with
``--unsafe-fixes``) keep what popular model libraries compute (bit for bit, or within a few ulps
where the rewrite runs other kernels)?

One command runs it all (about 30-60 min on 2 shared cores; the libraries live in a venv of
their own, see ``/work/shared/notes/real-code.md``)::

    /work/venvs/real/bin/python bench/migration_compare.py all

Steps (``--no-prepare`` reuses the copies of a previous run, ``--reuse-runs`` its results;
``--cases a,b`` runs some cases):

1. prepare: copy timm, torchvision, transformers, diffusers, kornia, x-transformers (and
   torch.optim's kernel modules, as ``torch_optim_copy``) from the venv's site-packages to
   ``<work>/original`` and to ``<work>/safe`` and ``<work>/unsafe``, and rewrite those two with
   this worktree's tool (``PYTHONPATH=<worktree> <tool-python> -m codemod fix --select ALL
   [--unsafe-fixes] --no-cache -j 2 <copy>``);
2. run: in separate processes (``PYTHONPATH=<work>/<copy>``, the venv's python, one thread),
   build every case of ``bench/migration/cases.py``: tiny seeded models of 25 families
   (transformers, torchvision, timm, diffusers, x-transformers, kornia: forward in train mode,
   backward with fixed float64 cotangents, one AdamW step) and helpers that mutate on purpose
   (timm init helpers, Mixup/CutMix, ModelEma V1/V2/V3, diffusers' tile blending, torch and timm
   optimizers for three steps). The original runs twice first: it must agree with itself;
3. compare: outputs, every gradient, parameters and buffers after the step, optimizer state and
   mutated inputs (max abs difference where they differ): the original against itself bit for
   bit (the same kernels run), each rewritten tier within ``REWRITE_ULPS`` ulps of the dtype
   (other kernel sequences, whose last bits depend on the CPU), with the tensors that are not
   bit-identical counted apart; the report says which comparison each column used;
4. bisect: for each tier with differences, the rewritten files the differing cases import are
   put back one group at a time (group testing over overlays of the original copy) to find
   which files' rewrites cause which differences; their rewritten lines are listed.

The report (markdown) goes to stdout and to ``<work>/report.md``. A single case can be run by
hand: ``PYTHONPATH=<work>/safe python bench/migration_compare.py worker out.pt hf_bert``.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import subprocess
import sys
import time
from typing import Dict, List, Optional

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from migration import copies, state  # noqa: E402

ROOT = HERE.parent
VARIANTS = ("original", "original_again", "safe", "unsafe")
# Ulps each variant is compared with against the original: 0 is bit for bit.
ULPS = {"original_again": 0, **{tier: state.REWRITE_ULPS for tier in copies.TIERS}}


# ---- the worker: runs inside one copy -----------------------------------------------------------

def worker(out: str, names: List[str]) -> None:
    import torch
    from migration import cases
    from migration.state import state_of
    torch.set_num_threads(1)
    root = pathlib.Path(os.environ["PYTHONPATH"].split(os.pathsep)[0]).resolve()
    results = {}
    for name in names or list(cases.CASES):
        start = time.perf_counter()
        try:
            results[name] = {"state": state_of(cases.CASES[name]()), "error": None}
        except Exception as exc:  # a crash is a result too (it may be the rewrite's doing)
            results[name] = {"state": {}, "error": f"{type(exc).__name__}: {exc}"[:300]}
        results[name]["seconds"] = time.perf_counter() - start
        print(f"[worker {root.name}] {name}: {results[name]['error'] or 'ok'} ({results[name]['seconds']:.1f} s)",
              file=sys.stderr, flush=True)
    files, origin = set(), {}
    for mod in list(sys.modules.values()):
        path = getattr(mod, "__file__", None)
        if path and pathlib.Path(path).resolve().is_relative_to(root):
            files.add(str(pathlib.Path(path).resolve().relative_to(root)))
    for lib in (*copies.LIBRARIES, copies.TORCH_OPTIM):
        if lib in sys.modules:
            origin[lib] = str(pathlib.Path(sys.modules[lib].__file__).resolve())
            assert pathlib.Path(origin[lib]).is_relative_to(root), f"{lib} was imported from {origin[lib]}, not {root}"
    torch.save({"cases": results, "files": sorted(files), "origin": origin}, out)


def run_worker(python: str, copy: pathlib.Path, out: pathlib.Path, names: List[str], timeout: int = 3600) -> dict:
    import torch
    env = dict(os.environ, PYTHONPATH=str(copy), OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false",
               PYTHONWARNINGS="ignore", TRANSFORMERS_VERBOSITY="error")
    log = out.with_suffix(".log")
    with open(log, "w") as err:
        done = subprocess.run([python, str(HERE / "migration_compare.py"), "worker", str(out), *names],
                              env=env, stdout=err, stderr=err, timeout=timeout, cwd=str(copy.parent))
    if done.returncode != 0:
        raise RuntimeError(f"worker in {copy} failed (exit {done.returncode}); see {log}:\n{log.read_text()[-2000:]}")
    return torch.load(out, weights_only=False)


# ---- comparing ----------------------------------------------------------------------------------

def comparisons() -> List[str]:
    """The report's line per column: which comparison it used, and why."""
    import torch
    env = ", ".join(f"{k}={os.environ[k]}" for k in ("MKL_CBWR", "ATEN_CPU_CAPABILITY") if k in os.environ)
    kernels = f"{torch.backends.cpu.get_cpu_capability()}{f', {env}' if env else ''}"
    lines = ["", "### How each column was compared", ""]
    for variant, ulps in ULPS.items():
        label = "original vs itself" if variant == "original_again" else f"{variant} tier"
        if ulps == 0:
            lines.append(f"- {label}: bit for bit (the same code runs the same kernels; NaN equals NaN)")
        else:
            lines.append(f"- {label}: within {ulps} ulps of each tensor's dtype, relative to its largest magnitude "
                         "(the rewrite runs other kernel sequences, whose last bits depend on the CPU); "
                         "tensors within that but not bit-identical are counted in the cell")
    lines.append(f"- kernels of this machine: ATen CPU capability {kernels}")
    return lines


def cell(base: dict, other: dict, ulps: int = 0) -> str:
    from migration.state import compare
    if base["error"] and other["error"]:
        return "both fail" if base["error"] == other["error"] else f"fails differently: {other['error'][:80]}"
    if other["error"]:
        return f"**fails**: {other['error'][:100]}"
    if base["error"]:
        return f"original fails ({base['error'][:60]}), rewrite runs"
    d = compare(base["state"], other["state"], ulps)
    if d.bit_identical:
        return f"identical ({d.compared} tensors)"
    if d.identical:
        return f"within {ulps} ulps ({d.compared} tensors, {d.close} not bit-identical)"
    return f"**{d.tensors}/{d.compared} differ**, max abs {d.max_abs:.3g} (`{d.worst}`)"


def differs(base: dict, other: dict, ulps: int = 0) -> bool:
    from migration.state import compare
    if base["error"] or other["error"]:
        return base["error"] != other["error"]
    return not compare(base["state"], other["state"], ulps).identical


def breakdown(results: Dict[str, dict], names: List[str]) -> List[str]:
    """For the helpers that differ: which of their parts (an optimizer, an init function, a
    Mixup mode), by the first component of the tensor names."""
    from migration import cases
    from migration.state import compare
    lines = []
    base = results["original"]["cases"]
    for tier in copies.TIERS:
        for name in names:
            a, b = base[name], results[tier]["cases"][name]
            if cases.KIND.get(name) != cases.HELPER or a["error"] or b["error"] or not differs(a, b, ULPS[tier]):
                continue
            parts = sorted({k.split(".")[0] for k in set(a["state"]) | set(b["state"])})
            bad = []
            for part in parts:
                sub = lambda s: {k: v for k, v in s.items() if k.split(".")[0] == part}
                d = compare(sub(a["state"]), sub(b["state"]), ULPS[tier])
                if not d.identical:
                    bad.append(f"`{part}` ({d.tensors} tensors, max abs {d.max_abs:.3g})")
            lines.append(f"- {tier}, {name}: {len(bad)} of {len(parts)} parts differ: {', '.join(bad)}")
    return ["", "### Helpers: which parts differ", "", *lines] if lines else []


def table(results: Dict[str, dict], names: List[str]) -> List[str]:
    from migration import cases
    lines = ["| case | kind | original vs itself | after `fix --select ALL` | after `... --unsafe-fixes` |",
             "|---|---|---|---|---|"]
    base = results["original"]["cases"]
    for name in names:
        row = [name, cases.KIND.get(name, "?"), cell(base[name], results["original_again"]["cases"][name])]
        row += [cell(base[name], results[t]["cases"][name], ULPS[t]) for t in copies.TIERS]
        lines.append("| " + " | ".join(row) + " |")
    return lines


# ---- bisecting ----------------------------------------------------------------------------------

class Bisector:
    """Group testing over overlays: which rewritten files, put alone into the original copy,
    change which of the differing cases."""

    def __init__(self, work: pathlib.Path, python: str, tier: str, names: List[str], base: Dict[str, dict]):
        self.work, self.python, self.tier, self.names, self.base = work, python, tier, names, base
        self.runs = 0

    def affected(self, files: List[str]) -> List[str]:
        target = self.work / f"overlay_{self.tier}"
        copies.overlay(self.work / "original", self.work / self.tier, files, target)
        self.runs += 1
        got = run_worker(self.python, target, self.work / f"overlay_{self.tier}.pt", self.names)["cases"]
        return [n for n in self.names if differs(self.base[n], got[n], ULPS[self.tier])]

    def culprits(self, files: List[str], hit: Optional[List[str]] = None) -> Dict[str, List[str]]:
        """{file (or "a+b+..." for a group that only acts together): cases it changes}."""
        hit = self.affected(files) if hit is None else hit
        if not hit:
            return {}
        if len(files) == 1:
            print(f"[bisect {self.tier}] {files[0]} changes {', '.join(hit)}", file=sys.stderr, flush=True)
            return {files[0]: hit}
        half = len(files) // 2
        left, right = files[:half], files[half:]
        hit_left = self.affected(left)
        hit_right = self.affected(right)
        if not hit_left and not hit_right:
            return {"+".join(files): hit}
        found = {}
        if hit_left:
            found.update(self.culprits(left, hit_left))
        if hit_right:
            found.update(self.culprits(right, hit_right))
        return found


def bisect(work: pathlib.Path, python: str, results: Dict[str, dict], names: List[str]) -> List[str]:
    lines = []
    base = results["original"]["cases"]
    for tier in copies.TIERS:
        failing = [n for n in names if differs(base[n], results[tier]["cases"][n], ULPS[tier])]
        if not failing:
            continue
        imported = set(run_worker(python, work / "original", work / "imports.pt", failing)["files"])
        changed = [f for f in copies.changed_files(work / "original", work / tier) if f in imported]
        start = time.perf_counter()
        finder = Bisector(work, python, tier, failing, base)
        found = finder.culprits(changed) if changed else {}
        lines += ["", f"### Which rewrites cause the differences ({tier} tier)", "",
                  f"{len(failing)} differing cases; {len(changed)} rewritten files among those they import; "
                  f"{finder.runs} overlay runs ({time.perf_counter() - start:.0f} s).", ""]
        if not found:
            lines.append("- no single file or group found (the differences did not reproduce on overlays)")
        for files, hit in found.items():
            lines.append(f"- `{files}` changes: {', '.join(hit)}")
            for rel in files.split("+"):
                for hunk in copies.hunks(work / "original", work / tier, rel)[:12]:
                    lines.append(f"    - {hunk}")
    return lines


# ---- all ----------------------------------------------------------------------------------------

def main(argv: Optional[List[str]] = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv and argv[0] == "worker":
        worker(argv[1], argv[2:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["all"])
    parser.add_argument("--work", type=pathlib.Path, default=pathlib.Path("/tmp/inplacefix-migration"))
    parser.add_argument("--python", default="/work/venvs/real/bin/python", help="the libraries' venv python")
    parser.add_argument("--tool-python", default="/work/main/.venv/bin/python", help="python that runs inplacefix")
    parser.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    parser.add_argument("--no-prepare", action="store_true", help="reuse the copies in --work")
    parser.add_argument("--no-bisect", action="store_true")
    parser.add_argument("--reuse-runs", action="store_true", help="reuse <work>/<variant>.pt results that cover the cases")
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    report = ["# Migration check on real libraries", ""]
    if not args.no_prepare:
        runs = copies.prepare(args.work, args.python, args.tool_python, ROOT)
        report += [f"- `fix` {r.tier}: {r.summary} ({r.seconds:.0f} s wall, exit {r.returncode})" for r in runs.values()]
    if copies.TOO_SLOW:
        report.append(f"- left out of the rewrite (too slow for the analysis): {', '.join(copies.TOO_SLOW)}")
    for tier in copies.TIERS:
        report.append(f"- {tier} tier: {len(copies.changed_files(args.work / 'original', args.work / tier))} files rewritten")
    from migration import cases
    names = [n for n in args.cases.split(",") if n] or list(cases.CASES)
    results = {}
    for variant in VARIANTS:
        copy = args.work / ("original" if variant == "original_again" else variant)
        t0 = time.perf_counter()
        saved = args.work / f"{variant}.pt"
        if args.reuse_runs and saved.exists():
            import torch
            previous = torch.load(saved, weights_only=False)
            if set(names) <= set(previous["cases"]):
                results[variant] = previous
                continue
        results[variant] = run_worker(args.python, copy, saved, names)
        print(f"[run] {variant}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    report += ["", *table(results, names), *comparisons(), *breakdown(results, names)]
    if not args.no_bisect:
        report += bisect(args.work, args.python, results, names)
    report += ["", f"Total {time.perf_counter() - started:.0f} s wall."]
    text = "\n".join(report) + "\n"
    (args.work / "report.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
