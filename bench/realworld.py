"""How the tool does on real bug reports: run it over bench/realworld/ and judge every rewrite.

Each case (bench/realworld/<set>/NNN_name.py) is a public bug report reduced to a program that
raises its error, with the maintainers' fix beside it (NNN_name.ref.py). Header lines say the error
family (`# error: A|B|C`), whether a local rewrite can fix it (`# codemod_fixable`), and whether the
reference deliberately computes something else (`# ref_semantics: differs`).

    python bench/realworld.py                          # repair (FILE::compute --write), dev sets
    python bench/realworld.py --mode fix               # default `inplacefix fix` over each set
    python bench/realworld.py --mode check             # default `check`: is the case flagged?
    python bench/realworld.py --holdout                # the set-aside parts, holdout*/ (end of a stop)
    python bench/realworld.py --sets set4 --verbose -j 2 --json out.json
    python bench/realworld.py --mode repair-recompute --not-fixable   # step order, --meaning recompute

A case is FIXED when its rewritten compute() runs and returns what the reference returns: every
tensor within 1e-6 + 1e-4 * its scale (the tensor's largest finite magnitude among the entries that
differ at all, so a masked fill's -1e9 written alike widens nothing; float rounding that
differs by memory layout is relative to it, not to each entry), NaN and infinities in the same places;
a FIXED row that an entry-by-entry comparison would have failed says so ("by_scale"). WRONG when
it runs and returns something else (a wrong fix written); STILL_FAILS, ERROR, UNCHANGED otherwise.
A differing result where the reference changes the meaning on purpose is DIFFERS_SEM, not wrong.
A not-fixable case (error A) whose rewrite returns what the original computed under the snapshot
oracle (its "as computed" meaning: the values its forward really used) is AS_COMPUTED, whatever
its reference means; `--not-fixable` runs those cases only.
In `repair-recompute` mode (`repair --meaning recompute`), such a rewrite that returns what the
original computes with the forward a step made stale run again after the step
(``codemod.runtime.recompute``) is RECOMPUTED; a FIXED one matches the maintainers' reference.
The last lines give the figures per set and per error family. Cases are judged each in a fresh interpreter.
In check mode a case is FLAGGED when the default report has a finding in the case file or in a helper
module the case runs (`NNNhelpers*.py` but the `_fixed` ones its reference runs), both given to one
`check`; the figures say how many of those were flagged in the case file itself.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict

HERE = pathlib.Path(__file__).resolve().parent / "realworld"
HOLDOUT = "holdout"  # every folder whose name starts with it is set aside
COMMANDS = {
    "repair": "inplacefix repair --write {}::compute",
    "repair-recompute": "inplacefix repair --write --meaning recompute {}::compute",
    "fix": "inplacefix fix --no-cache .",
    "fix-unsafe": "inplacefix fix --no-cache --unsafe-fixes .",
    "check": "inplacefix check --no-cache --format json {}",
}

JUDGE = r'''
import importlib.util, json, sys, warnings
import torch
warnings.filterwarnings("ignore")
def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
def grads(d):
    return {k: v for k, v in d.items() if isinstance(v, torch.Tensor)}
def close(a, b, elementwise=False):
    # |a - b| <= 1e-6 + 1e-4 * scale, scale the tensor's largest finite magnitude among the entries
    # the two do not agree on bit for bit (each entry's own
    # magnitude with elementwise=True, the rule up to stop 35); NaN and infinities in the same places
    a, b = (a.to(torch.complex128), b.to(torch.complex128)) if a.is_complex() else (a.double(), b.double())
    if not torch.equal(torch.isnan(a), torch.isnan(b)):
        return False
    inf = torch.isinf(a) | torch.isinf(b)
    if not torch.equal(a[inf], b[inf]):
        return False
    fin = torch.isfinite(a) & torch.isfinite(b)
    if not fin.any():
        return True
    a, b = a[fin], b[fin]
    differ = a != b  # entries written alike (a masked fill's -1e9) are no scale of rounding noise
    if not differ.any():
        return True
    a, b = a[differ], b[differ]
    scale = torch.maximum(a.abs(), b.abs()) if elementwise else max(float(a.abs().max()), float(b.abs().max()))
    return bool(((a - b).abs() <= 1e-6 + 1e-4 * scale).all())
new, ref = sys.argv[1], sys.argv[2]
out = {}
try:
    torch.manual_seed(0)
    got = grads(load(new, "rewritten").compute())
except RuntimeError as e:
    msg = str(e)
    out = {"status": "STILL_FAILS" if ("inplace" in msg or "in-place" in msg) else "ERROR", "why": msg.splitlines()[0][:200]}
except BaseException as e:
    out = {"status": "ERROR", "why": f"{type(e).__name__}: {str(e)[:200]}"}
else:
    torch.manual_seed(0)
    want = grads(load(ref, "reference").compute())
    bad, by_scale = [], []
    for k in sorted(set(want) | set(got)):
        if k not in got or k not in want:
            bad.append(f"{k} missing")
        elif got[k].shape != want[k].shape or got[k].is_complex() != want[k].is_complex() or not close(got[k], want[k]):
            bad.append(k)
        elif not close(got[k], want[k], elementwise=True):
            by_scale.append(k)
    why = ("differs: " + ", ".join(bad[:5])) if bad else (
        ("equal within 1e-4 of each tensor's scale, not entry by entry: " + ", ".join(by_scale[:5])) if by_scale else "")
    out = {"status": "DIFFERS" if bad else "FIXED", "why": why, "by_scale": by_scale}
print(json.dumps(out))
'''

# The "as computed" meaning of a program that fails with a saved-tensor error: the original run
# with every saved tensor snapshotted (the snapshot oracle of codemod.runtime.references).
ORACLE = JUDGE.replace(
    'want = grads(load(ref, "reference").compute())',
    'with torch.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):\n'
    '        want = grads(load(ref, "original").compute())')

# The "recompute" meaning: the original run with the stale part of the forward replayed after the step.
RECOMPUTE_ORACLE = JUDGE.replace(
    'want = grads(load(ref, "reference").compute())',
    'from codemod.runtime.recompute import RecomputeAfterStep\n'
    '    with RecomputeAfterStep():\n'
    '        want = grads(load(ref, "original").compute())')


def header(text: str, key: str, default: str = "") -> str:
    found = re.search(rf"^# {key}: *(\S+)", text, re.M)
    return found.group(1) if found else default


def cases(folder: pathlib.Path) -> list:
    # NNN_ or NNNN_ (numbers from 1001 since set7): a case file, not a helper module (NNNhelpers_*.py)
    return sorted(p for p in folder.glob("[0-9][0-9][0-9]*_*.py")
                  if not p.name.endswith(".ref.py") and re.match(r"\d{3,4}_", p.name))


def run_tool(command: str, case: pathlib.Path, cwd: pathlib.Path, timeout: int, also=()) -> dict:
    words = [w.replace("{}", case.name) for w in shlex.split(command)] + [h.name for h in also]
    try:
        done = subprocess.run(words, capture_output=True, text=True, timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired:
        return {"rc": 124, "out": "", "err": "timeout"}
    # the whole of stdout: `check --format json` is parsed, and a cut JSON read as "not flagged"
    return {"rc": done.returncode, "out": done.stdout, "err": done.stderr[-2000:]}


def judge(case: pathlib.Path, rewritten: pathlib.Path, original_text: str, helpers_changed: bool,
          against: str = "") -> dict:
    new = rewritten.read_text()
    row = {"case": case.name, "changed": new != original_text or helpers_changed}
    try:
        compile(new, str(rewritten), "exec")
    except SyntaxError as exc:
        return {**row, "status": "ERROR", "why": f"output does not parse: {exc}"}
    if not row["changed"]:
        return {**row, "status": "UNCHANGED", "why": ""}
    ref = case.with_name(case.name[:-3] + ".ref.py")
    script = JUDGE
    if against == "oracle":  # the original file (beside its own helpers), under the snapshot oracle
        ref, script = case, ORACLE
    elif against == "recompute":  # the original file, its stale forward replayed after the step
        ref, script = case, RECOMPUTE_ORACLE
    try:
        done = subprocess.run([sys.executable, "-c", script, str(rewritten), str(ref)], capture_output=True,
                              text=True, timeout=300, cwd=rewritten.parent)
        verdict = json.loads(done.stdout.strip().splitlines()[-1])
    except (subprocess.TimeoutExpired, ValueError, IndexError):
        verdict = {"status": "ERROR", "why": "the rewritten program hung or crashed"}
    return {**row, **verdict}


def evaluate_set(folder: pathlib.Path, mode: str, jobs: int, timeout: int, only_not_fixable: bool = False,
                 errors: str = "ABC") -> list:
    work = pathlib.Path(tempfile.mkdtemp(prefix=f"realworld-{folder.name}-"))
    try:
        for f in folder.glob("*.py"):
            shutil.copyfile(f, work / f.name)  # writable copies, whatever the source's mode
        todo = [c for c in cases(folder) if (not only_not_fixable or header(c.read_text(), "codemod_fixable") != "yes")
                and header(c.read_text(), "error") in errors]
        originals = {c.name: c.read_text() for c in todo}
        helpers = {c.name: sorted(folder.glob(c.name.split("_")[0] + "helpers*.py")) for c in todo}
        # the helper modules the case runs (the reference runs the `_fixed` ones instead): where the
        # culprit sits in one, `check` is given it too, as a user checks the project's files
        runs = {name: [h for h in found if not h.name.endswith("_fixed.py")] for name, found in helpers.items()}
        command = COMMANDS[mode]
        tool: dict = {}
        if "{}" in command:
            with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
                futures = {c.name: pool.submit(run_tool, command, work / c.name, work, timeout,
                                               runs[c.name] if mode == "check" else ())
                           for c in todo}
                tool = {name: f.result() for name, f in futures.items()}
        else:
            shared = run_tool(command, work, work, timeout * 4)
            tool = {c.name: shared for c in todo}
        rows = []
        for c in todo:
            text = originals[c.name]
            fixable = header(text, "codemod_fixable") == "yes"
            base = {"set": folder.name, "case": c.name, "fixable": fixable, "error": header(text, "error", "?"),
                    "pattern": header(text, "pattern", "?"), "semantics": header(text, "ref_semantics", "same"),
                    "tool_rc": tool[c.name]["rc"]}
            if mode == "check":
                in_case = _flagged(tool[c.name]["out"], c.name)
                in_helper = any(_flagged(tool[c.name]["out"], h.name) for h in runs[c.name])
                rows.append({**base, "status": "FLAGGED" if in_case or in_helper else "MISSED", "changed": False,
                             "why": "" if in_case or not in_helper else "flagged in a helper module only",
                             "in_case": in_case})
                continue
            changed_helpers = any(h.read_text() != (work / h.name).read_text() for h in helpers[c.name])
            row = judge(c, work / c.name, text, changed_helpers)
            if row["status"] == "DIFFERS" and not fixable and base["error"] == "A" and mode == "repair-recompute":
                if judge(folder / c.name, work / c.name, text, changed_helpers, against="recompute")["status"] == "FIXED":
                    row = {**row, "status": "RECOMPUTED", "why": "the recompute reference's values (" + row["why"] + " from the ref)"}
            elif row["status"] == "DIFFERS" and not fixable and base["error"] == "A":
                # Not the reference's meaning: is it the original's as computed (the snapshot oracle)?
                if judge(folder / c.name, work / c.name, text, changed_helpers, against="oracle")["status"] == "FIXED":
                    row = {**row, "status": "AS_COMPUTED", "why": "the snapshot oracle's values (" + row["why"] + " from the ref)"}
            if row["status"] == "DIFFERS":
                row["status"] = "DIFFERS_SEM" if base["semantics"] == "differs" else "WRONG"
            if row["status"] in ("UNCHANGED", "ERROR") and not row.get("why"):
                row["why"] = _last_line(tool[c.name])  # the tool's own reason (a device run shows nothing else)
            rows.append({**base, **row, "tool_tail": tool[c.name]["out"][-600:] + tool[c.name]["err"][-400:]})
        return rows
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _last_line(run: dict) -> str:
    """The last line the tool printed (its verdict or error), cut to 200 characters."""
    lines = [line.strip() for line in (run["out"] + "\n" + run["err"]).splitlines() if line.strip()]
    return f"tool rc {run['rc']}: " + (lines[-1][:200] if lines else "(no output)")


def _flagged(output: str, name: str) -> bool:
    try:
        data = json.loads(output)
    except ValueError:
        return False
    items = data if isinstance(data, list) else data.get("findings", data.get("results", []))
    return any(name in json.dumps(item) for item in items) if items else False


def summary(rows: list, mode: str) -> list:
    lines = []
    groups: dict = defaultdict(list)
    for r in rows:
        groups[("set", r["set"])].append(r)
        groups[("error", r["error"])].append(r)
        groups[("all", "all")].append(r)
    for key in sorted(groups, key=lambda k: (k[0] != "set", k[0] != "error", k[1])):
        rs = groups[key]
        fx = [r for r in rs if r["fixable"]]
        nf = [r for r in rs if not r["fixable"]]
        count = Counter(r["status"] for r in fx)
        label = f"{key[0]} {key[1]}"
        if mode == "check":
            lines.append(f"{label:12} fixable flagged {count['FLAGGED']}/{len(fx)} "
                         f"({sum(r.get('in_case', False) for r in fx)} in the case file itself); "
                         f"not-fixable flagged {sum(r['status'] == 'FLAGGED' for r in nf)}/{len(nf)}")
            continue
        ok = count["FIXED"]
        lines.append(f"{label:12} fixable fixed {ok}/{len(fx)} ({100 * ok / max(len(fx), 1):.0f}%; wrong {count['WRONG']}, "
                     f"still failing {count['STILL_FAILS']}, error {count['ERROR']}, unchanged {count['UNCHANGED']}, "
                     f"differs from a meaning-changing ref {count['DIFFERS_SEM']}); not-fixable fixed "
                     f"{sum(r['status'] == 'FIXED' for r in nf)}/{len(nf)}, as computed (snapshot oracle) "
                     f"{sum(r['status'] == 'AS_COMPUTED' for r in nf)}/{len(nf)}, recomputed "
                     f"{sum(r['status'] == 'RECOMPUTED' for r in nf)}/{len(nf)}, wrong {sum(r['status'] == 'WRONG' for r in nf)}; "
                     f"written {sum(r['changed'] for r in nf)}, of which not verified (tool exit != 0) "
                     f"{sum(r['changed'] and r['tool_rc'] != 0 for r in nf)}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=sorted(COMMANDS), default="repair")
    parser.add_argument("--sets", nargs="+", help="folders of bench/realworld/ (default: every one but the holdout* ones)")
    parser.add_argument("--holdout", action="store_true", help="measure the set-aside parts, holdout*/ (only at the end of a stop)")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=300, help="seconds per tool run")
    parser.add_argument("--json", help="write every row here")
    parser.add_argument("--not-fixable", action="store_true", help="only the cases marked `codemod_fixable: no`")
    parser.add_argument("--errors", default="ABC", help="only the cases of these error families (e.g. B or BC)")
    parser.add_argument("--verbose", action="store_true", help="print every case, not only the unfixed ones")
    args = parser.parse_args()
    if shutil.which(shlex.split(COMMANDS[args.mode])[0]) is None:
        print("inplacefix is not on PATH (activate the venv that has it installed)", file=sys.stderr)
        return 2
    folders = sorted(p.name for p in HERE.iterdir() if p.is_dir() and cases(p))
    names = args.sets or [n for n in folders if n.startswith(HOLDOUT) == args.holdout]
    rows = []
    for name in names:
        rows += evaluate_set(HERE / name, args.mode, args.jobs, args.timeout, args.not_fixable, args.errors)
    for r in rows:
        if args.verbose or r["status"] not in ("FIXED", "FLAGGED"):
            print(f'{r["status"]:12} {"fix" if r["fixable"] else "nofix"} {r["set"]}/{r["case"]} {r.get("why", "")}')
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))
    print("\n".join(summary(rows, args.mode)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
