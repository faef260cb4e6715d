"""Precision of the default report (hazards only) on real code bases, from hand labels.

The default report is what an editor shows and what CI fails on, so a false hazard costs trust.
This script measures it on installed libraries (issue 14). Steps, one command each (no command:
``count`` then ``score``):

``count``   run this checkout's ``inplacefix check --format json --select IPF1,IPF2`` (both
            tiers, no cache) over each code base under a site-packages folder; write every
            hazard to ``--findings`` and print the counts per code base: proven (IPF1xx, the
            default report) and possible (IPF2xx, provenance unknown, off by default).
``sample``  draw a seeded sample spread over the code bases (``--n``, at least ``--min`` per code
            base, the rest in proportion to its hazards) and merge it into the labels file: rows
            already labelled keep their label, new ids get an empty one to fill in.
``show ID`` print a finding's message and the source around it, for labelling.
``checks``  run every driver in ``bench/hazard_checks`` (``--python``: an interpreter with the
            real libraries, /work/venvs/real/bin/python by default): each runs a flagged line of the
            library with grad on and inputs requiring grad, calls backward and prints what PyTorch
            raised; print per finding raised / did not raise, its controls and context, and whether
            the label agrees (real = raised on the finding's path). Exit 1 on a disagreement, a
            control that raised or a driver that failed.
``score``   precision of the default report (proven hazards) per code base and overall from the
            labels file, for the findings reported now: real / (real + false) (unclear ones
            apart), pooled and weighted by each code base's hazard count; false positives by
            group, and the real ones. ``--tier possible`` scores the possible tier instead.

Labels (``bench/hazard_labels.tsv``, tab-separated): ``id`` (path:line:code, path relative to
site-packages), ``codebase``, ``label`` (real / false / unclear), ``group`` (why a false one is
false: see GROUPS; ``-`` for real ones), ``reason`` (one line), ``message`` (what the tool said).
"real" means a tensor autograd saved is modified in place while grad is on, in the code path
shown (or the leaf / view sibling error is raised there); "unclear" that it depends on callers
(a cache updated in place, an ``inputs_embeds`` a caller may pass as a leaf). A label whose reason
begins "checked with torch" was decided by a driver in ``bench/hazard_checks`` (``checks``): real =
PyTorch raised at backward (or the leaf / view error) with grad on and inputs requiring grad. Ids stay valid while the library versions stay (header lines record them): after a change
to the analysis, ``count``, ``sample`` (only new findings need labels) and ``score`` again.

Usage: ``/work/main/.venv/bin/python bench/hazard_precision.py [count|sample|show ID|checks|score]
[--site DIR] [--findings FILE] [--labels FILE] [--n 120] [--min 6] [--seed 14] [--tier proven]``.
"""

from __future__ import annotations

import argparse
import collections
import csv
import dataclasses
import json
import os
import pathlib
import random
import subprocess
import sys
import time
from typing import Dict, List, Optional

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from codemod.config import DEFAULT_EXCLUDE  # noqa: E402  (this checkout's, as check uses)

SITE = pathlib.Path("/work/venvs/real/lib/python3.11/site-packages")
REAL_PYTHON = "/work/venvs/real/bin/python"  # the interpreter of SITE: what the checks drivers import
CHECKS = ROOT / "bench" / "hazard_checks"
FINDINGS = pathlib.Path("/tmp/inplacefix_hazard_findings.json")
LABELS = ROOT / "bench" / "hazard_labels.tsv"

# Code base name -> folder under site-packages (issue 14's list).
CODE_BASES = {
    "torch.nn": "torch/nn",
    "torch.optim": "torch/optim",
    "torch.distributions": "torch/distributions",
    "torchvision.models": "torchvision/models",
    "transformers.models": "transformers/models",
    "timm": "timm",
    "diffusers": "diffusers",
    "kornia": "kornia",
    "x_transformers": "x_transformers",
}
# Files left out because today's check does not finish on them (reported in the count table).
# Each is a bug to fix, not a choice: remove the entry when it is fixed.
# Files the analysis does not finish, left out with the reason (diffusers/loaders/unet.py was,
# until tensor kind walked cycles of bindings once).
KNOWN_HANGS: dict = {}
VERSIONED = ("torch", "torchvision", "transformers", "timm", "diffusers", "kornia", "x_transformers")

# The possible tier's codes (issue 14): provenance unknown, off by default.
POSSIBLE_PREFIX = "IPF2"

# Why a false hazard is false (issue 14's five groups, then the ones found while labelling).
GROUPS = {
    "unknown-provenance": "comes from the caller / a call the analysis cannot see into, no saving op identified",
    "op-saves-nothing": "the op named does not save that tensor (scalar operand, pad, norm, reshape), "
    "or it runs after the mutation",
    "grad-off": "grad is off on that path (optimizer kernels, no_grad-only helpers, custom_op bodies, "
    "requires_grad guards)",
    "not-differentiable": "not a differentiable tensor (Python numbers, ints, bools, lists)",
    "nothing-requires-grad": "nothing on the path requires grad (.sample(), constants such as torch.eye)",
    "torch-op-no-data": "the tensor comes from a torch op the analysis has no data for (repeat_interleave, "
    "tile, view_as_real, clip...), assumed to save what it does not",
    "fresh-tensor": "the written tensor is freshly made (zeros, clone, new_*, cat...) and nothing saved it yet",
}
# One group per false finding: the first that applies, in this order (the later ones are what a
# better provenance analysis would fix; the earlier ones hold whatever the provenance).
PRECEDENCE = ("not-differentiable", "grad-off", "nothing-requires-grad", "op-saves-nothing",
              "torch-op-no-data", "fresh-tensor", "unknown-provenance")
FIELDS = ("id", "codebase", "label", "group", "reason", "message")


@dataclasses.dataclass(frozen=True)
class Hazard:
    id: str  # path:line:code
    codebase: str
    message: str

    @property
    def possible(self) -> bool:
        return self.id.rsplit(":", 1)[-1].startswith(POSSIBLE_PREFIX)


@dataclasses.dataclass
class Label:
    id: str
    codebase: str
    label: str
    group: str
    reason: str
    message: str


# ----------------------------------------------------------------- count


def files_of(site: pathlib.Path, folder: str) -> List[str]:
    """The folder's Python files, as ``check`` would walk them (default excludes), less
    KNOWN_HANGS; named one by one so that a hanging file can be left out."""
    skip = set(DEFAULT_EXCLUDE)
    return [
        p.relative_to(site).as_posix() for p in sorted((site / folder).rglob("*.py"))
        if not skip.intersection(p.relative_to(site).parts)
        and p.relative_to(site).as_posix() not in KNOWN_HANGS
    ]


def run_check(site: pathlib.Path, files: List[str], python: str, timeout: float) -> dict:
    """This checkout's ``check`` (both hazard tiers, no cache) on these files, as parsed JSON."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [python, "-m", "codemod", "check", "--format", "json", "--select", "IPF1,IPF2", "--no-progress",
           "--no-cache", *files]
    try:
        done = subprocess.run(cmd, cwd=site, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise SystemExit(f"check took over {timeout:.0f} s on {files[0]}...: a file that does not "
                         "finish? (find it, add it to KNOWN_HANGS, report it)") from None
    if done.returncode not in (0, 1) or not done.stdout.strip():
        raise SystemExit(f"check failed on {files[0]}... (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return json.loads(done.stdout)


def versions(site: pathlib.Path) -> Dict[str, str]:
    found = {}
    for info in site.glob("*.dist-info"):
        name, _, version = info.name[: -len(".dist-info")].partition("-")
        if name.lower().replace("-", "_") in VERSIONED:
            found[name] = version
    return dict(sorted(found.items()))


def count(args) -> List[Hazard]:
    site = pathlib.Path(args.site)
    hazards, rows = [], []
    for name, folder in CODE_BASES.items():
        if not (site / folder).is_dir():
            raise SystemExit(f"{site / folder} is missing: install the code bases first")
        start = time.perf_counter()
        files = files_of(site, folder)
        doc = run_check(site, files, args.python, args.timeout)
        found = [
            Hazard(f"{f['filename']}:{f['location']['row']}:{f['code']}", name, f["message"])
            for f in doc["findings"]
        ]
        rows.append((name, len(files), len(found), sum(h.possible for h in found), len(doc["errors"]),
                     time.perf_counter() - start))
        hazards += found
    pathlib.Path(args.findings).write_text(json.dumps({
        "versions": versions(site),
        "hazards": [dataclasses.asdict(h) for h in hazards],
    }, indent=1))
    print(f"{'code base':22} {'files':>6} {'proven':>8} {'possible':>9} {'errors':>7} {'seconds':>8}")
    for name, files, n, possible, errors, seconds in rows:
        print(f"{name:22} {files:6} {n - possible:8} {possible:9} {errors:7} {seconds:8.1f}")
    print(f"{'total':22} {sum(r[1] for r in rows):6} {sum(not h.possible for h in hazards):8} "
          f"{sum(h.possible for h in hazards):9} {sum(r[4] for r in rows):7}")
    print(f"(proven: IPF1xx, the default report; possible: IPF2xx, on request; findings written to "
          f"{args.findings})")
    for path, why in KNOWN_HANGS.items():
        print(f"left out: {path}: {why}")
    return hazards


def load_hazards(path: str) -> List[Hazard]:
    try:
        data = json.loads(pathlib.Path(path).read_text())
    except FileNotFoundError:
        raise SystemExit(f"{path} is missing: run `count` first") from None
    return [Hazard(**h) for h in data["hazards"]]


# ----------------------------------------------------------------- labels


def read_labels(path: pathlib.Path) -> Dict[str, Label]:
    if not path.exists():
        return {}
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    labels = {}
    for row in csv.DictReader(lines, delimiter="\t"):
        label = Label(**{k: (row.get(k) or "").strip() for k in FIELDS})
        if label.label and label.label not in ("real", "false", "unclear"):
            raise SystemExit(f"{label.id}: label must be real, false or unclear, not {label.label!r}")
        if label.label == "false" and label.group not in GROUPS:
            raise SystemExit(f"{label.id}: group {label.group!r} is none of {', '.join(GROUPS)}")
        labels[label.id] = label
    return labels


def read_header(path: pathlib.Path) -> List[str]:
    """The label file's ``#`` lines, without the ``# ``."""
    if not path.exists():
        return []
    return [line[2:] for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("# ")]


def write_labels(path: pathlib.Path, labels: Dict[str, Label], header: List[str]) -> None:
    order = list(CODE_BASES)
    rows = sorted(labels.values(), key=lambda lab: (order.index(lab.codebase), lab.id))
    with open(path, "w", encoding="utf-8", newline="") as out:
        for line in header:
            out.write(f"# {line}\n")
        writer = csv.writer(out, delimiter="\t", lineterminator="\n")
        writer.writerow(FIELDS)
        for lab in rows:
            writer.writerow([getattr(lab, k).replace("\t", " ") for k in FIELDS])


def quotas(counts: Dict[str, int], n: int, minimum: int) -> Dict[str, int]:
    """At least ``minimum`` per code base (all of a small one), the rest in proportion."""
    total = sum(counts.values()) or 1
    return {b: min(c, max(minimum, round(n * c / total))) for b, c in counts.items()}


def sample(args) -> None:
    hazards = [h for h in load_hazards(args.findings) if h.possible == (args.tier == "possible")]
    by_base = collections.defaultdict(list)
    for h in hazards:
        by_base[h.codebase].append(h)
    labels = read_labels(pathlib.Path(args.labels))
    want = quotas({b: len(by_base[b]) for b in CODE_BASES}, args.n, args.min)
    added = 0
    for base in CODE_BASES:
        pool = sorted(by_base[base], key=lambda h: h.id)
        for h in random.Random(f"{args.seed}:{base}").sample(pool, want[base]):
            if h.id not in labels:
                labels[h.id] = Label(h.id, base, "", "", "", h.message)
                added += 1
    versions_line = json.loads(pathlib.Path(args.findings).read_text()).get("versions", {})
    header = [
        "Hand labels of sampled hazards (bench/hazard_precision.py; columns described there).",
        "label: real = the write breaks backward in the code path shown: a tensor autograd saved is modified in "
        "place with grad on (or the leaf / view sibling error is raised); false = it cannot; unclear = it depends "
        "on how callers use it.",
        "group of a false one: the first that applies of " + ", ".join(PRECEDENCE),
        f"sample: seed {args.seed}, n {args.n}, at least {args.min} per code base; "
        "versions: " + ", ".join(f"{k} {v}" for k, v in versions_line.items()),
        "hazards when sampled: " + ", ".join(f"{b} {len(by_base[b])}" for b in CODE_BASES)
        + f"; total {len(hazards)}",
    ]
    kept = [line for line in read_header(pathlib.Path(args.labels))
            if not line.startswith(("Hand labels", "label:", "group of", "sample:", "hazards when sampled:"))]
    write_labels(pathlib.Path(args.labels), labels, header + kept)
    print(f"sample per code base: {want}; {added} new rows to label in {args.labels}")


def show(args) -> None:
    path, line, code = args.id.rsplit(":", 2)
    line = int(line)
    message = next((h.message for h in load_hazards(args.findings) if h.id == args.id), "(not reported now)")
    print(f"{args.id}\n  {message}\n")
    text = (pathlib.Path(args.site) / path).read_text(encoding="utf-8").splitlines()
    for n in range(max(1, line - args.context), min(len(text), line + args.context) + 1):
        print(f"{'>' if n == line else ' '}{n:6} {text[n - 1]}")


# ----------------------------------------------------------------- checks


@dataclasses.dataclass(frozen=True)
class Outcome:
    """One scenario of a driver (bench/hazard_checks/_check.py prints them)."""
    finding: str
    role: str  # path (decides the label), control (must not raise), context (how it is normally run)
    scenario: str
    raised: Optional[str]  # the kind of in-place error, an expected exception's name, or None
    error: str


def read_outcomes(stdout: str) -> List[Outcome]:
    return [Outcome(**json.loads(line[len("CHECK "):])) for line in stdout.splitlines()
            if line.startswith("CHECK ")]


def verdicts(outcomes: List[Outcome], labels: Dict[str, Label]) -> List[str]:
    """What is wrong: a label that disagrees with its path scenarios, a control that raised."""
    wrong = []
    for finding in dict.fromkeys(o.finding for o in outcomes):
        mine = [o for o in outcomes if o.finding == finding]
        paths = [o for o in mine if o.role == "path"]
        raised = bool(paths) and all(o.raised for o in paths)
        label = labels[finding].label if finding in labels else "(unlabelled)"
        if not paths:
            wrong.append(f"{finding}: no path scenario")
        elif label != ("real" if raised else "false"):
            wrong.append(f"{finding}: labelled {label}, but the path {'raised' if raised else 'did not raise'}")
        wrong += [f"{finding}: control raised: {o.scenario}" for o in mine if o.role == "control" and o.raised]
    return wrong


def checks(args) -> None:
    python = args.python or REAL_PYTHON
    labels = read_labels(pathlib.Path(args.labels))
    outcomes, failed = [], []
    for driver in sorted(CHECKS.glob("[!_]*.py")):
        start = time.perf_counter()
        done = subprocess.run([python, driver.name], cwd=CHECKS, capture_output=True, text=True,
                              timeout=args.timeout)
        found = read_outcomes(done.stdout)
        print(f"{driver.name}: {len(found)} scenarios, {time.perf_counter() - start:.1f} s")
        if done.returncode != 0 or not found:
            failed.append(f"{driver.name} failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
        outcomes += found
    for finding in dict.fromkeys(o.finding for o in outcomes):
        label = labels[finding].label if finding in labels else "(unlabelled)"
        print(f"\n{finding}  [label: {label}; reported now: {reported_text(finding, args.findings)}]")
        for o in sorted((o for o in outcomes if o.finding == finding), key=lambda o: ROLES.index(o.role)):
            print(f"  {o.role:8} {o.raised or 'did not raise':22} {o.scenario}")
    wrong = failed + verdicts(outcomes, labels)
    print(f"\n{len(dict.fromkeys(o.finding for o in outcomes))} findings checked; "
          + ("labels agree with the drivers" if not wrong else "PROBLEMS:\n  " + "\n  ".join(wrong)))
    if wrong:
        raise SystemExit(1)


ROLES = ("path", "control", "context")


def reported_text(finding: str, findings: str) -> str:
    """How ``count`` last reported a labelled finding: "proven IPF1xx", "possible IPF2xx", "no", or
    unknown when there is no findings file to tell (not "no": count may simply not have run)."""
    if not pathlib.Path(findings).exists():
        return f"unknown (no {findings}: run count first, or pass its --findings)"
    return reported_now(findings).get(_rule_site(finding), "no")


def reported_now(findings: str) -> Dict[str, str]:
    """rule site -> how ``count`` last reported it (proven IPF1xx or possible IPF2xx), if it ran."""
    if not pathlib.Path(findings).exists():
        return {}
    return {_rule_site(h.id): f"{'possible' if h.possible else 'proven'} {h.id.rsplit(':', 1)[-1]}"
            for h in load_hazards(findings)}


# ----------------------------------------------------------------- score


def precision(real: int, false: int) -> str:
    return f"{100 * real / (real + false):5.1f}%" if real + false else "    -"


def score(args) -> None:
    everything = load_hazards(args.findings)
    every = {h.id: h for h in everything}  # two hazards with one code on one line share an id
    found = [h for h in everything if h.possible == (args.tier == "possible")]
    hazards = {h.id: h for h in found}
    print(f"the {'default report (proven hazards, IPF1xx)' if args.tier == 'proven' else 'possible tier (IPF2xx)'}:")
    counts = collections.Counter(h.codebase for h in found)
    labels = [lab for lab in read_labels(pathlib.Path(args.labels)).values() if lab.id in hazards]
    done = [lab for lab in labels if lab.label]
    print(f"{'code base':22} {'hazards':>8} {'labelled':>9} {'real':>5} {'false':>6} {'unclear':>8} {'precision':>10}")
    weighted, weight = 0.0, 0
    for base in CODE_BASES:
        mine = [lab for lab in done if lab.codebase == base]
        real = sum(lab.label == "real" for lab in mine)
        false = sum(lab.label == "false" for lab in mine)
        unclear = sum(lab.label == "unclear" for lab in mine)
        if real + false:
            weighted += counts[base] * real / (real + false)
            weight += counts[base]
        print(f"{base:22} {counts[base]:8} {len(mine):9} {real:5} {false:6} {unclear:8} {precision(real, false):>10}")
    real = sum(lab.label == "real" for lab in done)
    false = sum(lab.label == "false" for lab in done)
    unclear = sum(lab.label == "unclear" for lab in done)
    print(f"{'overall (pooled)':22} {sum(counts.values()):8} {len(done):9} {real:5} {false:6} {unclear:8} "
          f"{precision(real, false):>10}")
    if weight:
        print(f"{'overall (weighted)':22} {'':8} {'':9} {'':5} {'':6} {'':8} {100 * weighted / weight:9.1f}%")
    print(f"{'overall (unclear=false)':22} {'':8} {'':9} {'':5} {'':6} {'':8} "
          f"{precision(real, false + unclear):>10}")
    if len(done) < len(labels):
        print(f"({len(labels) - len(done)} sampled findings still unlabelled)")
    groups = collections.Counter(lab.group for lab in done if lab.label == "false")
    print("\nfalse positives by group:")
    for group, n in groups.most_common():
        print(f"  {n:4}  {100 * n / max(false, 1):5.1f}%  {group}: {GROUPS[group]}")
    print("\nby tier (issue 14): proven (IPF1xx, the default report) or possible (IPF2xx, on request); labels "
          "made before the tiers count for the finding now on their line with the same rule:")
    now = {_rule_site(h.id): h.id for h in everything}
    labelled = []
    for lab in read_labels(pathlib.Path(args.labels)).values():
        current = lab.id if lab.id in every else now.get(_rule_site(lab.id))
        if lab.label and current is not None and all(m.id != current for m in labelled):
            labelled.append(dataclasses.replace(lab, id=current))
    gone = [lab for lab in read_labels(pathlib.Path(args.labels)).values()
            if lab.label and lab.id not in every and _rule_site(lab.id) not in now]
    print(f"  no longer reported: {len(gone)} labelled ({sum(g.label == 'real' for g in gone)} real, "
          f"{sum(g.label == 'false' for g in gone)} false, {sum(g.label == 'unclear' for g in gone)} unclear)")
    for tier, mine in (("proven", [lab for lab in labelled if not every[lab.id].possible]),
                       ("possible", [lab for lab in labelled if every[lab.id].possible])):
        real_t = sum(lab.label == "real" for lab in mine)
        false_t = sum(lab.label == "false" for lab in mine)
        share = sum(h.possible == (tier == "possible") for h in everything)
        kinds = collections.Counter(lab.group for lab in mine if lab.label == "false")
        print(f"  {tier:9} {share:4} hazards, {len(mine):3} labelled: {real_t} real, {false_t} false, "
              f"precision {precision(real_t, false_t).strip()}; false: "
              + ", ".join(f"{g} {n}" for g, n in kinds.most_common()))
    print("\nreal ones:")
    for lab in done:
        if lab.label == "real":
            print(f"  {lab.id}  {lab.reason}")


def _rule_site(hazard_id: str) -> str:
    """``path:line:IPF104`` and ``path:line:IPF204`` -> ``path:line:04``: one rule at one line."""
    site, _, code = hazard_id.rpartition(":")
    return f"{site}:{code[-2:]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", nargs="?", choices=("count", "sample", "show", "checks", "score"))
    parser.add_argument("id", nargs="?", help="for show: path:line:code")
    parser.add_argument("--site", default=str(SITE), help="site-packages holding the code bases")
    parser.add_argument("--findings", default=str(FINDINGS), help="where count writes the hazards")
    parser.add_argument("--labels", default=str(LABELS))
    parser.add_argument("--python", help="interpreter that runs the tool (count: this one by default) or the "
                        f"drivers (checks: {REAL_PYTHON} by default)")
    parser.add_argument("--n", type=int, default=120, help="sample size")
    parser.add_argument("--min", type=int, default=6, help="least per code base")
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--tier", choices=("proven", "possible"), default="proven",
                        help="for sample and score: the default report (proven) or the possible tier")
    parser.add_argument("--context", type=int, default=12, help="for show: lines either side")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per code base (checks: per driver)")
    args = parser.parse_args()
    if args.command != "checks":
        args.python = args.python or sys.executable
    if args.command is None:
        count(args)
        print()
        score(args)
    else:
        {"count": count, "sample": sample, "show": show, "checks": checks, "score": score}[args.command](args)


if __name__ == "__main__":
    main()
