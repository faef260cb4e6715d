#!/usr/bin/env python
"""Checker for the cases of a bench/realworld/ folder (adapted from the shared corpus's set2/check_cases.py;
adds kind C and ref_semantics). It runs no inplacefix code: only the cases, with torch.

For every NNN_*.py case in the folder (excluding *.ref.py):
  * run compute() of the original in a fresh interpreter and require the in-place RuntimeError named in its
    `# error:` header (A: "... modified by an inplace operation ...", B: "a [view of a] leaf Variable that
    requires grad is being used in an in-place operation", C: "... is a view and is being modified inplace ..." /
    "Output 0 of XBackward is a view ...");
  * run compute() of NNN_*.ref.py and require it to finish and return a non-empty dict of finite tensors;
  * informational only: for kind-A cases, replay the original with every saved tensor cloned at pack time
    (torch.autograd.graph.saved_tensors_hooks) and compare its gradients with the ref's.

Usage: python bench/realworld/check.py FOLDER [-v] [case-number-or-substring ...]   (FOLDER: set4, set5, holdout, ...)
Prints a table and exits 1 if any case fails.
"""
import glob
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.abspath(__file__))
HERE = ROOT  # the folder of the cases, set by main()

RUNNER = r'''
import importlib.util, json, math, sys, traceback
import torch
path, mode = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("case_under_test", path)
mod = importlib.util.module_from_spec(spec)

def summarize(res):
    if not isinstance(res, dict) or not res:
        return {"status": "bad_return", "detail": "compute() returned %r" % type(res).__name__}
    out, bad = {}, []
    for k, v in res.items():
        if not torch.is_tensor(v):
            bad.append("%s is %s" % (k, type(v).__name__))
            continue
        v = v.detach().double()
        if not torch.isfinite(v).all():
            bad.append("%s not finite" % k)
        out[k] = v.flatten().tolist()
    if bad:
        return {"status": "bad_return", "detail": "; ".join(bad)}
    return {"status": "ok", "grads": out}

try:
    if mode == "replay":
        ctx = torch.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t)
        ctx.__enter__()
    spec.loader.exec_module(mod)
    import time as _time
    _t0 = _time.perf_counter()
    try:
        res = mod.compute()
    finally:
        print("@@TIME@@%.3f" % (_time.perf_counter() - _t0))
    print("@@RESULT@@" + json.dumps(summarize(res)))
except Exception as e:
    print("@@RESULT@@" + json.dumps({"status": "raised", "type": type(e).__name__, "msg": str(e).splitlines()[0] if str(e) else ""}))
'''

MSG_A = "modified by an inplace operation"
MSG_B = re.compile(r"a (view of a )?leaf Variable that requires grad is being used in an in-place operation")
MSG_C = re.compile(r"is a view and (is being|its base or another view of its base has been) modified inplace|"
                   r"is a view of a view which was created in no_grad mode|Output \d+ of \w+ is a view|"
                   r"A view was created in no_grad mode and is being modified inplace")


def run(path, mode, timeout=120):
    # one intra-op thread: the cases are tiny, and a 2-core machine is oversubscribed otherwise
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", RUNNER, path, mode], capture_output=True, text=True,
                          timeout=timeout, cwd=HERE, env=env)
    dt = float("nan")
    for line in proc.stdout.splitlines():
        if line.startswith("@@TIME@@"):
            dt = float(line[len("@@TIME@@"):])
    for line in proc.stdout.splitlines()[::-1]:
        if line.startswith("@@RESULT@@"):
            return json.loads(line[len("@@RESULT@@"):]), dt
    return {"status": "crashed", "detail": (proc.stderr or proc.stdout).strip().splitlines()[-1:]}, dt


def header(path):
    info = {}
    with open(path) as f:
        for line in f:
            if not line.startswith("#"):
                break
            m = re.match(r"#\s*(source|pattern|codemod_fixable|error|ref_semantics):\s*(.*)", line)
            if m:
                info[m.group(1)] = m.group(2).strip()
    return info


def max_abs_diff(g1, g2):
    if set(g1) != set(g2):
        return None
    d = 0.0
    for k in g1:
        if len(g1[k]) != len(g2[k]):
            return None
        d = max([d] + [abs(a - b) for a, b in zip(g1[k], g2[k])])
    return d


def main(argv):
    global HERE
    if not argv or argv[0].startswith("-"):
        print(__doc__)
        return 2
    # a folder of ROOT (`holdout18`) or a path (`bench/realworld/holdout18`, absolute or from here)
    HERE = argv[0] if os.path.isabs(argv[0]) or os.path.isdir(argv[0]) else os.path.join(ROOT, argv[0])
    HERE = os.path.abspath(HERE)
    if not os.path.isdir(HERE):
        print("no such folder: %s" % argv[0], file=sys.stderr)
        return 2
    argv = argv[1:]
    verbose = "-v" in argv
    filters = [a for a in argv if a != "-v"]
    # NNN_ or NNNN_ (set7/holdout5 number from 1001): a case file, not a helper module (NNNhelpers_*.py)
    cases = sorted(p for p in glob.glob(os.path.join(HERE, "[0-9][0-9][0-9]*_*.py"))
                   if not p.endswith(".ref.py") and re.match(r"\d{3,4}_", os.path.basename(p)))
    if filters:
        cases = [p for p in cases if any(f in os.path.basename(p) for f in filters)]
    rows, failures = [], 0
    for path in cases:
        name = os.path.basename(path)[:-3]
        info = header(path)
        kind = info.get("error", "?")
        problems = []
        for key in ("source", "pattern", "codemod_fixable", "error", "ref_semantics"):
            if key not in info:
                problems.append("missing header '%s'" % key)
        orig, t_orig = run(path, "orig")
        if orig["status"] != "raised" or orig.get("type") != "RuntimeError":
            problems.append("original did not raise RuntimeError (%s)" % orig.get("status"))
            observed = orig.get("status")
        else:
            msg = orig["msg"]
            if MSG_A in msg:
                observed = "A"
            elif MSG_B.search(msg):
                observed = "B (view)" if "view of a leaf" in msg else "B"
            elif MSG_C.search(msg):
                observed = "C"
            else:
                observed = "other"
            if observed[0] != kind:
                problems.append("expected error %s, got: %s" % (kind, msg[:120]))
        ref_path = path[:-3] + ".ref.py"
        if not os.path.exists(ref_path):
            ref = {"status": "missing"}
            t_ref = 0.0
        else:
            ref, t_ref = run(ref_path, "ref")
        if ref["status"] != "ok":
            problems.append("ref failed: %s %s" % (ref.get("status"), ref.get("msg") or ref.get("detail") or ""))
        replay = "-"
        if kind == "A" and ref["status"] == "ok":
            rep, _ = run(path, "replay")
            if rep["status"] == "ok":
                d = max_abs_diff(rep["grads"], ref["grads"])
                replay = "n/a" if d is None else ("same" if d < 1e-5 else "differs (%.1e)" % d)
            else:
                replay = "replay %s" % rep["status"]
        status = "PASS" if not problems else "FAIL"
        failures += bool(problems)
        if kind == "A" and info.get("ref_semantics") == "same" and not replay.startswith("same"):
            problems.append("ref_semantics: same but clone-replay gives %s" % replay)
        rows.append((name, kind, observed, "ok" if ref["status"] == "ok" else ref["status"], replay,
                     "%.2f/%.2f" % (t_orig, t_ref), status, problems))
        if verbose:
            print(name, status, problems, file=sys.stderr)

    widths = [max(len(str(r[i])) for r in rows + [("case", "expected", "original raised", "ref", "clone-replay vs ref", "compute() s orig/ref", "status")]) for i in range(7)]
    head = ("case", "expected", "original raised", "ref", "clone-replay vs ref", "compute() s orig/ref", "status")
    print(" | ".join(h.ljust(w) for h, w in zip(head, widths)))
    print("-+-".join("-" * w for w in widths))
    for r in rows:
        print(" | ".join(str(c).ljust(w) for c, w in zip(r[:7], widths)))
        for p in r[7]:
            print("    ! " + p)
    print("\n%d cases, %d passed, %d failed" % (len(rows), len(rows) - failures, failures))
    return 1 if failures or not rows else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
