"""Verify before and after isolation: wall time on the model fixtures, and the soundness cases.

Usage::

    git archive <commit-before> | tar -x -C /tmp/before      # the harness to compare with
    python bench/verify_isolation.py --before /tmp/before [--repeat 1]

For each tree (``--before`` and this checkout) a fresh ``python`` imports that tree's
``codemod`` and times ``verify`` on every model fixture (CPU), then judges every case of
``tests/soundness_cases.py`` (the old harness has no timeout, so the hanging case is skipped
there). Prints one table per tree and the ratio of the fixture wall times.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import textwrap

ROOT = pathlib.Path(__file__).resolve().parent.parent

RUNNER = textwrap.dedent('''
    import dataclasses, json, pathlib, sys, tempfile, time
    tree, cases_dir = sys.argv[1], sys.argv[2]
    sys.path[:0] = [tree, cases_dir]
    import torch
    from codemod.config import Settings
    from codemod.runtime.verify import verify
    from soundness_cases import RIGHT, WRONG, Case

    def headers(path):
        found = {}
        for line in path.read_text().splitlines():
            if not line.startswith("# "):
                break
            key, _, value = line[2:].partition(":")
            found[key.strip()] = value.strip()
        return found

    def verdict(result):
        v = getattr(result, "verdict", None)
        return v.value if v is not None else ("verified" if result.verified else "not verified")

    out = {"fixtures": [], "cases": []}
    start_all = time.perf_counter()
    for path in sorted((pathlib.Path(tree) / "fixtures" / "models").glob("*.py")):
        h = headers(path)
        settings = dataclasses.replace(Settings(), unsafe_fixes=h.get("fix") == "--unsafe-fixes")
        start = time.perf_counter()
        result = verify(f"{path}::{h['verify']}", settings=settings, devices=["cpu"])
        out["fixtures"].append([path.stem, verdict(result), time.perf_counter() - start])
    out["fixtures_total"] = time.perf_counter() - start_all
    for group, cases in (("wrong", WRONG), ("right", RIGHT)):
        for case in cases:
            options = dict(case.options or {})
            if "timeout" in options:
                import inspect
                if "timeout" not in inspect.signature(verify).parameters:
                    out["cases"].append([group, case.id, "hangs (no timeout)"])
                    continue
            with tempfile.TemporaryDirectory() as tmp:
                for name, text in (case.files or {}).items():
                    (pathlib.Path(tmp) / name).write_text(Case("", "", text, []).original())
                model = pathlib.Path(tmp) / "model.py"
                model.write_text(case.original())
                sys.path.insert(0, tmp)
                try:
                    result = verify(f"{model}::{case.name}", rewritten_source=case.rewritten(),
                                    devices=["cpu"], **options)
                    got = verdict(result)
                except BaseException as exc:  # the old harness let SystemExit through
                    got = f"raised {type(exc).__name__}"
                finally:
                    sys.path.remove(tmp)
            out["cases"].append([group, case.id, got])
    print("JSON" + json.dumps(out))
''')


def run_tree(tree: pathlib.Path) -> dict:
    proc = subprocess.run([sys.executable, "-c", RUNNER, str(tree), str(ROOT / "tests")],
                          capture_output=True, text=True, timeout=1800)
    line = next((x for x in proc.stdout.splitlines() if x.startswith("JSON")), None)
    if line is None:
        raise SystemExit(f"{tree}: no result\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    return json.loads(line[4:])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", type=pathlib.Path, required=True)
    args = parser.parse_args()
    results = {"before": run_tree(args.before), "after": run_tree(ROOT)}
    for label, res in results.items():
        fixtures = res["fixtures"]
        ok = sum(v == "verified" for _, v, _ in fixtures)
        wrong = [c for c in res["cases"] if c[0] == "wrong"]
        right = [c for c in res["cases"] if c[0] == "right"]
        fooled = [c[1] for c in wrong if c[2] == "verified"]
        refused = [c[1] for c in right if c[2] != "verified"]
        print(f"{label}: {len(fixtures)} model fixtures in {res['fixtures_total']:.1f} s "
              f"({ok} verified); wrong rewrites verified: {len(fooled)} of {len(wrong)}; "
              f"right rewrites not verified: {len(refused)} of {len(right)}")
        for name in fooled:
            print(f"    fooled by {name}")
        for name in refused:
            verdict = next(c[2] for c in right if c[1] == name)
            print(f"    refused {name} ({verdict})")
    before, after = results["before"]["fixtures_total"], results["after"]["fixtures_total"]
    print(f"fixture verify wall time: before {before:.1f} s, after {after:.1f} s, ratio {after / before:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
