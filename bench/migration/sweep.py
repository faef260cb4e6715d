"""Migration sweep: many small cases over the library copies of ``migration_compare.py``
(original, safe, unsafe), each run in the original twice and in each rewritten tier, compared
(outputs, gradients, state after an optimizer step, mutated inputs), with the **reach**: the
share of each tier's rewritten spots (diff hunks) that the runs executed, measured by line
tracing of the rewritten files in the rewritten copy.

    python bench/migration/sweep.py prepare --work W --libraries issue24   # copies + rewrite (one set)
    python bench/migration/sweep.py spots  --work W            # hunks per tier, per library
    python bench/migration/sweep.py plan   --work W            # the cases the spots call for
    python bench/migration/sweep.py run    --work W [--variants original,original_again,safe,unsafe]
    python bench/migration/sweep.py report --work W            # comparison + reach (markdown)

``W`` holds ``original/``, ``safe/``, ``unsafe/`` (``migration_compare.py all`` prepares them for
the model libraries; ``prepare --libraries issue24`` for the code bases issue 24 measured first,
whose cases are ``l24:`` ones and their docstring examples).
Results go to ``W/sweep/<variant>/<case>.pt`` (one file per case, so a crash loses one case and
a rerun resumes); executed lines of rewritten files to ``<case>.hits.json`` beside them.
Use the libraries' venv python (``/work/venvs/real/bin/python``) for ``run``; one process at a
time, one thread.
"""

from __future__ import annotations

import argparse
import collections
import difflib
import json
import os
import pathlib
import subprocess
import sys
import time
from typing import Dict, List, Tuple

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from migration import copies  # noqa: E402

VARIANTS = ("original", "original_again", "safe", "unsafe")
CHUNK = 100


# ---- spots ---------------------------------------------------------------------------------------

def spots(work: pathlib.Path, tier: str) -> List[Tuple[str, int, int, str]]:
    """Every rewritten spot of a tier: (file, first line, last line in the rewritten copy, text);
    kept in ``W/sweep/<tier>.spots.json`` (delete it after rewriting the copies again)."""
    cache = work / "sweep" / f"{tier}.spots.json"
    if cache.exists():
        return [tuple(s) for s in json.loads(cache.read_text())]
    out = []
    for rel in copies.changed_files(work / "original", work / tier):
        a = (work / "original" / rel).read_text(encoding="utf-8").splitlines()
        b = (work / tier / rel).read_text(encoding="utf-8").splitlines()
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
            if tag == "equal":
                continue
            first, last = (j1 + 1, j2) if j2 > j1 else (j1, j1 + 1)  # a deletion: the lines around it
            text = f"{' | '.join(s.strip() for s in a[i1:i2])[:90]} -> {' | '.join(s.strip() for s in b[j1:j2])[:90]}"
            out.append((rel, first, last, text))
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(out))
    return out


def library(rel: str) -> str:
    return rel.split("/")[0]


def unreachable(rel: str) -> str:
    """Why a rewritten file is never imported at run time ('' if it may be)."""
    name = rel.rsplit("/", 1)[-1]
    if rel.startswith("transformers/models/") and name.startswith(("modular_", "convert_")):
        return "transformers source templates and conversion scripts (never imported by the library)"
    return ""


# ---- the cases a spot list calls for --------------------------------------------------------------

def plan(work: pathlib.Path) -> List[str]:
    from migration import sweep_cases
    files = set()
    for tier in copies.TIERS:
        files |= {s[0] for s in spots(work, tier) if not unreachable(s[0])}
    if {library(rel) for rel in files} <= set(copies.ISSUE24):
        from migration import sweep_libs24
        return sweep_libs24.plan(sorted(files))
    names = sweep_cases.plan(sorted(files))
    # cases chosen by the definitions that hold the spots (see sweep_reach)
    from migration import sweep_reach
    defs = {rel: names_ for rel, names_ in sweep_reach.spot_defs(work, copies.TIERS, spots).items() if not unreachable(rel)}
    names += sweep_reach.tf_class_plan(work / "original", defs)
    names += sweep_reach.timm_plan(work / "original", defs)
    names += sweep_reach.diffusers_plan(work / "original", defs)
    names += sweep_reach.tfcpad_plan(work / "original", defs)
    return list(dict.fromkeys(names))


# ---- compact states ------------------------------------------------------------------------------

BIG = 65536  # elements: a tensor over this is kept as a digest, sums and a strided sample
SAMPLE = 4096


def compact(state: dict) -> dict:
    """A state whose big tensors (a VGG's classifier, its gradient and Adam's moments: gigabytes
    per case) are replaced by ``name#sha`` (SHA-256 of the bytes: bit-identity), ``name#sum`` and
    ``name#abs`` (float64 sums) and ``name#sample`` (every k-th element, at most 4096): a lost
    update or a changed value moves the sums; the digest says whether it is bit-identical."""
    import hashlib
    import torch
    out = {}
    for key, t in state.items():
        if not isinstance(t, torch.Tensor) or t.numel() <= BIG or "#" in key:
            out[key] = t
            continue
        flat = t.detach().reshape(-1)
        digest = hashlib.sha256(flat.contiguous().view(torch.uint8).numpy().tobytes()).digest()
        out[f"{key}#sha"] = torch.tensor(list(digest), dtype=torch.uint8)
        wide = flat.to(torch.complex128 if flat.is_complex() else torch.float64)
        out[f"{key}#sum"] = wide.sum().reshape(1)
        out[f"{key}#abs"] = wide.abs().sum().reshape(1)
        out[f"{key}#sample"] = flat[:: max(1, flat.numel() // SAMPLE)][:SAMPLE].clone()
    return out


# ---- the worker ----------------------------------------------------------------------------------

class Tracer:
    """Lines executed in a set of files (absolute paths), per case."""

    def __init__(self, root: pathlib.Path, rels: List[str]):
        self.root = root
        self.wanted = {str((root / r).resolve()): r for r in rels}
        self.known: Dict[str, str] = {}
        self.hits: Dict[str, set] = collections.defaultdict(set)

    def rel(self, filename: str) -> str:
        found = self.known.get(filename)
        if found is None:
            found = self.known[filename] = self.wanted.get(os.path.realpath(filename), "")
        return found

    def global_trace(self, frame, event, arg):
        rel = self.rel(frame.f_code.co_filename)
        if not rel:
            return None
        hits = self.hits[rel]
        hits.add(frame.f_lineno)

        def local(frame, event, arg):
            if event == "line":
                hits.add(frame.f_lineno)
            return local
        return local

    def start(self):
        import threading
        self.hits = collections.defaultdict(set)
        sys.settrace(self.global_trace)
        threading.settrace(self.global_trace)

    def stop(self) -> Dict[str, List[int]]:
        import threading
        sys.settrace(None)
        threading.settrace(None)
        return {k: sorted(v) for k, v in self.hits.items()}


def worker(out_dir: str, names: List[str], trace_list: str = "") -> None:
    import signal
    import torch
    from migration import sweep_cases
    from migration.state import state_of
    torch.set_num_threads(1)
    root = pathlib.Path(os.environ["PYTHONPATH"].split(os.pathsep)[0]).resolve()
    out = pathlib.Path(out_dir)
    tracer = Tracer(root, json.loads(pathlib.Path(trace_list).read_text())) if trace_list else None

    def alarm(signum, frame):
        raise TimeoutError("case ran over 120 s")
    signal.signal(signal.SIGALRM, alarm)
    for name in names:
        start = time.perf_counter()
        if tracer:
            tracer.start()
        signal.alarm(120)
        try:
            result = {"state": compact(state_of(sweep_cases.make(name))), "error": None}
        except BaseException as exc:  # a crash is a result too (it may be the rewrite's doing)
            if isinstance(exc, KeyboardInterrupt):
                raise
            result = {"state": {}, "error": f"{type(exc).__name__}: {exc}"[:300]}
        finally:
            signal.alarm(0)
            hits = tracer.stop() if tracer else None
        result["seconds"] = time.perf_counter() - start
        safe_name = name.replace("/", "_")
        torch.save(result, out / f"{safe_name}.tmp")
        (out / f"{safe_name}.tmp").replace(out / f"{safe_name}.pt")
        (out / f"{safe_name}.status").write_text(result["error"] or "ok")
        if hits is not None:
            (out / f"{safe_name}.hits.json").write_text(json.dumps(hits))
        print(f"[worker {root.name}] {name}: {result['error'] or 'ok'} ({result['seconds']:.1f} s)", file=sys.stderr, flush=True)


def run(work: pathlib.Path, python: str, names: List[str], variants: List[str]) -> None:
    for variant in variants:
        copy = work / ("original" if variant == "original_again" else variant)
        out = work / "sweep" / variant
        out.mkdir(parents=True, exist_ok=True)
        trace = ""
        if variant in copies.TIERS:
            trace = str(work / "sweep" / f"{variant}.files.json")
            pathlib.Path(trace).write_text(json.dumps(copies.changed_files(work / "original", work / variant)))
        todo = [n for n in names if not (out / f"{n.replace('/', '_')}.pt").exists()]
        if variant != "original":  # a case the original cannot run compares nothing: not run again
            todo = [n for n in todo if original_ran(work, n)]
        t0 = time.perf_counter()
        while todo:
            chunk, todo = todo[:CHUNK], todo[CHUNK:]
            env = dict(os.environ, PYTHONPATH=str(copy), OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false",
                       PYTHONWARNINGS="ignore", TRANSFORMERS_VERBOSITY="error", HF_HUB_OFFLINE="1",
                       PYTHONHASHSEED="0")  # the tiny configs' token ids use hash(): one value in every process
            with open(out / "worker.log", "a") as log:
                done = subprocess.run([python, str(HERE / "sweep.py"), "worker", str(out), trace, *chunk], env=env,
                                      stdout=log, stderr=log, cwd=str(copy.parent))
            missing = [n for n in chunk if not (out / f"{n.replace('/', '_')}.pt").exists()]
            if done.returncode != 0 and missing:  # the process died in a case: record it, go on after it
                import torch
                dead = missing[0]
                torch.save({"state": {}, "error": f"process died (exit {done.returncode})", "seconds": 0.0},
                           out / f"{dead.replace('/', '_')}.pt")
                todo = missing[1:] + todo
        print(f"[run] {variant}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)


# ---- the report ----------------------------------------------------------------------------------

def original_ran(work: pathlib.Path, name: str) -> bool:
    """Whether the original copy ran a case without error (kept beside the result, as loading
    every result to ask takes minutes)."""
    status = work / "sweep" / "original" / f"{name.replace('/', '_')}.status"
    if not status.exists():
        base = load(work, "original", name)
        if base is None:
            return False
        status.write_text("ok" if not base["error"] else base["error"])
    return status.read_text() == "ok"


def load(work: pathlib.Path, variant: str, name: str):
    import torch
    path = work / "sweep" / variant / f"{name.replace('/', '_')}.pt"
    if not path.exists():
        return None
    try:
        result = torch.load(path, weights_only=False)
    except (EOFError, RuntimeError):  # being written
        return None
    result["state"] = compact(result["state"])
    return result


def hits(work: pathlib.Path, variant: str, name: str) -> Dict[str, List[int]]:
    path = work / "sweep" / variant / f"{name.replace('/', '_')}.hits.json"
    return json.loads(path.read_text()) if path.exists() else {}


def verdict(base: dict, other: dict, ulps: int) -> Tuple[str, str]:
    """(kind, text): kind is identical / close / both-fail / differs / fails."""
    from migration.state import compare
    if base["error"] and other["error"]:
        same = base["error"] == other["error"]
        return ("both-fail" if same else "differs"), ("both fail" if same else f"fails differently: {other['error'][:100]}")
    if other["error"]:
        return "differs", f"**fails**: {other['error'][:120]}"
    if base["error"]:
        return "differs", f"original fails ({base['error'][:60]}), rewrite runs"
    a, b = base["state"], other["state"]
    digests = lambda s: {k: v for k, v in s.items() if k.endswith("#sha")}
    values = lambda s: {k: v for k, v in s.items() if not k.endswith(("#sha", "#sum"))}
    d = compare(values(a), values(b), ulps)
    digest = compare(digests(a), digests(b), 0)
    if digest.tensors:  # big tensors not bit-identical: their sums and samples decide
        d = d._replace(close=d.close + digest.tensors)
    for key in sorted(k for k in set(a) | set(b) if k.endswith("#sum")):  # ulps of each element: scale by the sum of |x|
        x, y, stem = a.get(key), b.get(key), key[: -len("#sum")]
        if x is None or y is None:
            d = d._replace(tensors=d.tensors + 1, compared=d.compared + 1, max_abs=float("inf"), worst=key)
            continue
        import torch
        eps = torch.finfo(a[f"{stem}#sample"].dtype).eps if a.get(f"{stem}#sample") is not None and a[f"{stem}#sample"].is_floating_point() else 0.0
        gap = (x - y).abs().max().item()
        scale = max(a[f"{stem}#abs"].abs().max().item(), b[f"{stem}#abs"].abs().max().item())
        d = d._replace(compared=d.compared + 1)
        if gap > ulps * eps * scale:
            d = d._replace(tensors=d.tensors + 1, max_abs=max(d.max_abs, gap), worst=key if gap >= d.max_abs else d.worst)
    if d.bit_identical:
        return "identical", f"identical ({d.compared} tensors)"
    if d.identical:
        return "close", f"within {ulps} ulps ({d.compared} tensors, {d.close} not bit-identical)"
    return "differs", f"**{d.tensors}/{d.compared} differ**, max abs {d.max_abs:.3g} (`{d.worst}`)"


def report(work: pathlib.Path, names: List[str]) -> str:
    from migration.state import REWRITE_ULPS
    ulps = {"original_again": 0, "safe": REWRITE_ULPS, "unsafe": REWRITE_ULPS}
    lines = ["# Migration sweep: original vs rewritten, and the rewritten spots the runs reach", ""]
    kinds = {v: collections.Counter() for v in ulps}
    rows, good = [], {v: set() for v in copies.TIERS}
    ran = [n for n in names if load(work, "original", n) is not None]
    for name in ran:
        base = load(work, "original", name)
        row = [name, "ok" if not base["error"] else f"fails: {base['error'][:60]}"]
        for variant in ulps:
            other = load(work, variant, name)
            if other is None:
                row.append("not run")
                continue
            kind, text = verdict(base, other, ulps[variant])
            kinds[variant][kind] += 1
            row.append(text)
            if variant in good and not base["error"] and kind in ("identical", "close"):
                good[variant].add(name)  # (the original runs again only where a tier differs)
        rows.append(row)
    lines.append(f"{len(ran)} cases run; original ok in {sum(1 for r in rows if r[1] == 'ok')}.")
    lines.append("")
    lines.append("| column | identical | within ulps | both fail | differ / fail |")
    lines.append("|---|---|---|---|---|")
    for variant, c in kinds.items():
        lines.append(f"| {variant} | {c['identical']} | {c['close']} | {c['both-fail']} | {c['differs']} |")
    lines += ["", "## Reach (spots: diff hunks of the tier's rewrite; reached: a line of the hunk executed "
              "in a case that ran in the original and agreed with it; 'importable' leaves out transformers' "
              "modular_*/convert_* files, which the library never imports)", ""]
    for tier in copies.TIERS:
        all_spots = spots(work, tier)
        executed: Dict[str, set] = collections.defaultdict(set)
        executed_any: Dict[str, set] = collections.defaultdict(set)
        for name in ran:
            for rel, got in hits(work, tier, name).items():
                executed_any[rel].update(got)
                if name in good[tier]:
                    executed[rel].update(got)
        per = collections.defaultdict(lambda: [0, 0, 0, 0])  # spots, importable, reached (good), reached (any)
        for rel, first, last, _ in all_spots:
            row = per[library(rel)]
            row[0] += 1
            row[1] += not unreachable(rel)
            span = set(range(first, last + 1))
            row[2] += bool(executed[rel] & span)
            row[3] += bool(executed_any[rel] & span)
        total = [sum(r[i] for r in per.values()) for i in range(4)]
        lines += [f"### {tier} tier", "", "| library | spots | importable | reached (agreeing cases) | share | share of importable | reached by any run |",
                  "|---|---|---|---|---|---|---|"]
        for lib, r in sorted(per.items()) + [("**all**", total)]:
            lines.append(f"| {lib} | {r[0]} | {r[1]} | {r[2]} | {100 * r[2] / max(r[0], 1):.1f}% | "
                         f"{100 * r[2] / max(r[1], 1):.1f}% | {r[3]} |")
        lines.append("")
    lines += ["## Cases", "", "| case | original | original vs itself | safe | unsafe |", "|---|---|---|---|---|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "worker":
        worker(argv[1], argv[3:], argv[2])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["prepare", "spots", "plan", "run", "report"])
    parser.add_argument("--work", type=pathlib.Path, default=pathlib.Path("/tmp/inplacefix-migration"))
    parser.add_argument("--python", default="/work/venvs/real/bin/python")
    parser.add_argument("--tool-python", default="/work/main/.venv/bin/python", help="python that runs inplacefix (prepare)")
    parser.add_argument("--libraries", default="models", choices=sorted(copies.LIBRARY_SETS), help="the set to copy (prepare)")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--cases", default="", help="comma-separated case names (default: the plan)")
    parser.add_argument("--cases-file", default="", help="a file of case names, one a line (``plan``'s output)")
    args = parser.parse_args(argv)
    if args.command == "prepare":
        args.work.mkdir(parents=True, exist_ok=True)
        for cache in (args.work / "sweep").glob("*.spots.json"):
            cache.unlink()
        copies.prepare(args.work, args.python, args.tool_python, HERE.parent.parent, libraries=copies.LIBRARY_SETS[args.libraries])
        return 0
    if args.command == "spots":
        for tier in copies.TIERS:
            found = spots(args.work, tier)
            per = collections.Counter(library(s[0]) for s in found)
            dead = sum(1 for s in found if unreachable(s[0]))
            print(f"{tier}: {len(found)} spots ({dead} in files never imported): {dict(sorted(per.items()))}")
        return 0
    names = [n for n in args.cases.split(",") if n]
    if args.cases_file:
        names += [n.strip() for n in pathlib.Path(args.cases_file).read_text().splitlines() if n.strip()]
    names = names or plan(args.work)
    if args.command == "plan":
        print("\n".join(names))
        print(f"{len(names)} cases", file=sys.stderr)
    elif args.command == "run":
        run(args.work, args.python, names, args.variants.split(","))
    else:
        text = report(args.work, names)
        (args.work / "sweep" / "report.md").write_text(text)
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
