"""Repair a script: locate, fix the culprit lines in whichever project files hold them, rerun,
until the first N backward passes run; then prove it against a reference.

Every run is its own interpreter with a timeout (:func:`codemod.runtime.script.run_script`),
seeded the same way, with the rewritten files substituted in memory: nothing is written before
the proof. The proof compares, pass by pass, what the repaired script computed with what the
broken one meant:

- in-place errors: the snapshot oracle (the original script with every tensor autograd saves
  copied at save time: the gradient of the values its forward really computed);
- leaf errors: the original script with the offending updates applied outside autograd (under
  ``torch.no_grad()``): the meaning of weight surgery, init and manual SGD;
- view errors: the original script with every view PyTorch refuses to modify in place replaced
  by a copy of itself (``view_copies``), the meaning of IPF006's fix; ``unproven`` where the
  tensor viewed is read after a write into the copy;
- a reference that itself fails: no reference, so the verdict is ``unproven``.

Compared: the tensors passed to each backward pass, the gradients of the leaves they reach
(parameters by module and name), the parameters after every optimizer step, and every module's
parameters and buffers at the end, and what the script printed (numbers to the precision
printed: :mod:`codemod.runtime.printed`). ``verified`` needs at least one gradient compared and no
difference beyond the dtype's tolerance; a difference only in what was printed is ``unproven``. Only a verified repair is written.

Files are read and written as ``fix`` does (:mod:`codemod.engine.fileio`): decoded by their
BOM or coding cookie with every line's ending kept, and written back in that encoding, only
the fixed lines changed, atomically, links and owners kept. The script is read before its first
run; a file saved while the repair runs (before or after the tool read it) is left with the
user's edit and reported (``errors``, exit 2), never overwritten.
"""

from __future__ import annotations

import dataclasses
import difflib
import enum
import os
import pathlib
import tempfile
from typing import TYPE_CHECKING, Dict, List, Optional

from codemod.encoding import decode_source, encode_source
from codemod.engine.diffs import unified_diff
from codemod.engine.fileio import (CHANGED, FileChanged, Snapshot, WriteRefused, check_unchanged, read_snapshot,
                                   write_atomic)
from codemod.runtime.printed import printed_difference, printed_lines
from codemod.runtime.script import Interpreters, Script, ScriptRun, interpreters, run_script
from codemod.runtime.repair import key_text
from codemod.runtime.suggest import digest, display_path

if TYPE_CHECKING:
    import torch

VALUES_DIFFER = "values differ"  # a difference of values beyond the tolerance (the others: keys, dtypes, shapes)
# rtol, atol for one device: the repaired script runs the same ops as the reference.
_TOLERANCES = {"torch.float64": (1e-7, 1e-9), "torch.float32": (1e-5, 1e-6),
               "torch.float16": (1e-2, 1e-3), "torch.bfloat16": (2e-2, 1e-2)}


class Verdict(str, enum.Enum):
    verified = "verified"
    not_verified = "not verified"
    unproven = "unproven"


@dataclasses.dataclass
class Comparison:
    """What was compared between the reference and the repaired run, and what differed."""

    passes: int = 0
    losses: int = 0
    gradients: int = 0
    steps: int = 0  # parameter tensors compared after optimizer steps
    final: int = 0  # parameters and buffers compared at the end
    printed: int = 0  # lines of the script's standard output compared
    max_abs: float = 0.0
    differences: List[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class ScriptRepair:
    script: Script
    rounds: List[ScriptRun]
    actions: List[str]
    originals: Dict[str, str]
    repaired: Dict[str, str]
    verdict: Optional[Verdict] = None  # None: nothing was changed
    reference: str = "none"
    reasons: List[str] = dataclasses.field(default_factory=list)
    comparison: Optional[Comparison] = None
    rounding: str = ""  # the rounding probes: whether each entry's noise was measured
    written: List[str] = dataclasses.field(default_factory=list)
    round_sources: List[Dict[str, str]] = dataclasses.field(default_factory=list)  # what each round ran
    read: Dict[str, Snapshot] = dataclasses.field(default_factory=dict)  # by real path: each file as read
    errors: List[str] = dataclasses.field(default_factory=list)  # files left alone on purpose, and why

    def snapshot(self, path: str) -> Optional[Snapshot]:
        return self.read.get(os.path.realpath(path))
    tried: List[str] = dataclasses.field(default_factory=list)  # earlier attempts that did not verify, and why

    @property
    def changed(self) -> bool:
        return any(self.repaired[p] != self.originals[p] for p in self.repaired)

    @property
    def conflicts(self) -> List[dict]:
        return [c for r in self.rounds for c in r.conflicts]

    @property
    def exit_code(self) -> int:
        """0 verified (or nothing to repair in a script that ran), 2 a file that changed on disk
        or could not be written, else 1."""
        if self.errors:
            return 2
        if self.verdict is None:
            return 0 if not self.conflicts and self.rounds and self.rounds[0].finished else 1
        return 0 if self.verdict is Verdict.verified else 1

    def diff(self) -> str:
        return "".join(unified_diff(display_path(p), self.originals[p], self.repaired[p])
                       for p in self.repaired if self.repaired[p] != self.originals[p])


def repair_script(script: Script, max_backward: int = 2, max_rounds: int = 8,
                  timeout: Optional[float] = 300.0, server: Optional[Interpreters] = None,
                  max_attempts: int = 4, meaning: str = "as-computed") -> ScriptRepair:
    """``server``: a fork server started with ``interpreters(seed=True)`` to share (else one
    is started for this repair: its runs then cost one torch import in all). A repair that
    does not verify is tried again with each conflict's next candidate fix (at most
    ``max_attempts`` in all); the first that verifies is the result, else the first attempt.
    ``meaning``: of a step-order repair, ``as-computed`` (the snapshot oracle) or ``recompute``
    (the forward through the stepped module run again after the step; ``runtime.recompute``)."""
    script.check()
    own = server is None
    server = interpreters(seed=True) if own else server
    try:
        with tempfile.TemporaryDirectory(prefix="inplacefix-repair-") as workdir:
            skip: Dict[str, int] = {}
            seen = set()
            tried: List[str] = []
            first = None
            for _ in range(max_attempts):
                result = _repair(script, max_backward, max_rounds, timeout, workdir, server, skip, meaning)
                first = first or result
                texts = tuple(sorted(result.repaired.items()))
                if result.verdict is not Verdict.not_verified or texts in seen:
                    break
                seen.add(texts)
                why = result.reasons[0] if result.reasons else "differs"
                tried.append(f"{'; '.join(a for a in result.actions if not a.startswith('not changed'))}: "
                             f"not verified ({why})")
                for conflict in result.conflicts:
                    skip[key_text(conflict)] = skip.get(key_text(conflict), 0) + 1
            if result.verdict is Verdict.verified:
                result.tried = tried
                return result
            first.tried = tried[1:]  # nothing verified: the first choice, with what else was tried
            return first
    finally:
        if own and server is not None:
            server.close()


def _repair(script: Script, max_backward: int, max_rounds: int, timeout, workdir: str, server,
            skip: Optional[Dict[str, int]] = None, meaning: str = "as-computed") -> ScriptRepair:
    originals: Dict[str, str] = {}
    sources: Dict[str, str] = {}
    rounds: List[ScriptRun] = []
    actions: List[str] = []
    result = ScriptRepair(script, rounds, actions, originals, sources)
    if script.path:  # as it is before it runs: an edit saved during the run is seen at the write
        try:
            _read(result, str(pathlib.Path(script.cwd) / script.path))
        except (OSError, ValueError, SyntaxError, LookupError):
            pass  # the run says what is wrong with it
    for _ in range(max_rounds):
        result.round_sources.append(dict(sources))
        # Each round also records: the round that runs clean is the repaired run to compare.
        run = run_script(script, max_backward=max_backward, sources=sources, seed=True, capture=True,
                         timeout=timeout, workdir=workdir, record=True, server=server, skip=skip, meaning=meaning)
        rounds.append(run)
        if not run.conflicts:
            break
        changed = False
        for suggestion in run.suggestions:
            path = suggestion["path"]
            actions += suggestion["actions"]
            if suggestion.get("fixed") is None:
                continue
            if not script.in_project(path):
                actions.append(f"not changed: {display_path(path)} is outside the project "
                               f"({script.project_root})")
                continue
            if path not in originals:
                try:
                    originals[path] = _read(result, path)
                except (OSError, ValueError, SyntaxError, LookupError) as exc:
                    actions.append(f"not changed: cannot read {display_path(path)}: "
                                   f"{getattr(exc, 'strerror', None) or exc}")
                    continue
            if suggestion.get("basis") not in (None, digest(sources.get(path, originals[path]))):
                # The run fixed another text than the one read here: saved in between.
                result.errors.append(f"{display_path(path)}: {CHANGED}")
                return result
            if suggestion["fixed"] != sources.get(path, originals[path]):
                sources[path] = suggestion["fixed"]
                changed = True
        if not changed:
            break
    if not result.changed:
        if result.conflicts:
            result.reasons.append("no rewrite found for the conflict: fix it by hand")
        elif rounds[0].inplace_family:
            result.reasons.append(f"the script dies of the in-place error, but the locator did not see the "
                                  f"change (native code, another thread, its own saved-tensor hooks): {rounds[0].error}")
        elif not rounds[0].finished:
            result.reasons.append(f"the script fails on its own: {rounds[0].error or rounds[0].outcome.value}")
        return result
    last = rounds[-1]
    if last.conflicts or not last.finished:
        result.verdict = Verdict.not_verified
        result.reasons.append(f"the repaired script still fails: {last.error or last.outcome.value}")
        return result
    _prove(result, last, max_backward, timeout, workdir, server, meaning)
    return result


def _read(result: ScriptRepair, path: str) -> str:
    """``path``'s text (by its BOM or cookie, line endings kept), read once per repair: the
    snapshot is what a write checks the file against."""
    snapshot = result.snapshot(path)
    if snapshot is None:
        snapshot = read_snapshot(pathlib.Path(path))
        result.read[os.path.realpath(path)] = snapshot
    return decode_source(snapshot.data)


def _prove(result: ScriptRepair, repaired: ScriptRun, max_backward: int, timeout, workdir: str, server,
           meaning: str = "as-computed") -> None:
    kinds = {c["kind"] for c in result.conflicts}
    known = {"saved-then-modified", "leaf", "view", "optimizer-step"}
    if kinds - known:
        result.verdict = Verdict.unproven
        result.reasons.append(f"no reference for {', '.join(sorted(kinds - known))} conflicts")
        return
    leaf_sites = _leaf_sites(result)
    if leaf_sites is None:
        result.verdict = Verdict.unproven
        result.reasons.append("a leaf update's line has no counterpart in the original file")
        return
    meanings = []
    recompute = meaning == "recompute" and "optimizer-step" in kinds
    snapshot = bool(kinds & {"saved-then-modified", "optimizer-step"}) if not recompute else \
        "saved-then-modified" in kinds
    if "saved-then-modified" in kinds:
        meanings.append("the snapshot oracle (the values the forward really computed)")
    if recompute:  # the step-order repair's meaning "recompute" (runtime.recompute)
        meanings.append("recompute (the original script with the part of the forward an optimizer step made "
                        "stale run again on the updated parameters before each backward pass)")
    elif "optimizer-step" in kinds:  # the step-order repair's meaning "as computed" (runtime.step_order)
        meanings.append("the snapshot oracle, as computed (a loss's gradients through the values its forward "
                        "used, before an optimizer step changed them)")
    if leaf_sites:
        meanings.append("leaf updates applied outside autograd (as under torch.no_grad())")
    if "view" in kinds:
        meanings.append("writes into copies (views PyTorch refuses to modify in place replaced by copies)")
    result.reference = " and ".join(meanings)
    common = dict(mode="record", max_backward=max_backward, seed=True, capture=True, timeout=timeout,
                  workdir=workdir, server=server)
    meaning_args = dict(snapshot=snapshot, no_grad_sites=leaf_sites, view_copies="view" in kinds, recompute=recompute)
    reference = run_script(result.script, **meaning_args, **common)
    if recompute and reference.unfit:
        result.verdict = Verdict.unproven
        result.reasons.append(f"the recompute meaning does not fit this script: {reference.unfit}")
        return
    if reference.unfit:
        # In place, a later read sees the write: the meaning PyTorch gives the script where it
        # allows the write (views allowed: the writes reach the tensor viewed) is the reference.
        unfit = reference.unfit
        meaning_args = dict(snapshot=snapshot, no_grad_sites=leaf_sites, views_allowed=True)
        reference = run_script(result.script, **meaning_args, **common)
        if not reference.finished or reference.record is None:
            result.verdict = Verdict.unproven
            result.reasons.append(f"the writes-into-copies meaning does not fit: {unfit}; with views "
                                  f"allowed the script fails: {reference.error or reference.outcome.value}")
            return
        result.reference = result.reference.replace(
            "writes into copies (views PyTorch refuses to modify in place replaced by copies)",
            "views allowed (outputs of functions that return several views made ordinary views, "
            "views made under no_grad detached: the writes reach the tensor viewed)")
    if not reference.finished or reference.record is None:
        result.verdict = Verdict.unproven
        result.reasons.append(f"the reference run failed: {reference.error or reference.outcome.value} "
                              "(that meaning does not fit this script)")
        return
    if repaired.record is None:
        result.verdict = Verdict.not_verified
        result.reasons.append(f"the repaired script failed: {repaired.error or repaired.outcome.value}")
        return
    if repaired.backward_passes != reference.backward_passes:
        result.verdict = Verdict.not_verified
        result.reasons.append(f"{repaired.backward_passes} backward passes ran, the reference ran "
                              f"{reference.backward_passes}")
        return
    result.verdict, reasons, result.comparison = judge(reference, repaired)
    if result.comparison.differences and all(VALUES_DIFFER in d for d in result.comparison.differences):
        noise = _measured_noise(result, reference.record, lambda direction: run_script(
            result.script, **meaning_args, **common, rounding=direction))
        if noise:
            result.verdict, reasons, result.comparison = judge(reference, repaired, noise)
    result.reasons += reasons


def _measured_noise(result: ScriptRepair, reference_file: str, probe) -> Dict[str, "torch.Tensor"]:
    """Each recorded tensor's rounding noise, entry by entry: the larger of the reference against
    the reference run again rounded upward, then downward (:mod:`codemod.runtime.rounding`).
    Only where values differ beyond each entry's own magnitude: it costs two runs. A probe
    that fails measures nothing (each entry keeps its own bound)."""
    import torch

    from codemod.runtime.compare import entry_noise
    from codemod.runtime.rounding import DIRECTIONS, probe_available

    if not probe_available():
        result.rounding = "not measured: this machine cannot set the rounding mode"
        return {}
    ref = torch.load(reference_file, weights_only=True)
    noise: Dict[str, torch.Tensor] = {}
    failed = []
    for direction in DIRECTIONS:
        run = probe(direction)
        if not run.finished or run.record is None:
            failed.append(f"rounded {direction}, it fails: {run.error or run.outcome.value}")
            continue
        other = torch.load(run.record, weights_only=True)
        for key, a in ref.items():
            b = other.get(key)
            if (a is None or b is None or a.dtype != b.dtype or a.shape != b.shape
                    or not (a.is_floating_point() or a.is_complex())):
                continue
            delta = entry_noise(a, b)
            noise[key] = torch.maximum(noise[key], delta) if key in noise else delta
    if len(failed) == len(DIRECTIONS):
        result.rounding = "not measured: the probes failed (" + "; ".join(failed) + ")"
        return {}
    result.rounding = (f"measured over {len(noise)} tensor(s) (the reference run again rounded upward, then "
                       "downward)" + (f"; one direction only ({failed[0]})" if failed else ""))
    return noise


def judge(reference: ScriptRun, repaired: ScriptRun, noise: Optional[Dict[str, "torch.Tensor"]] = None):
    """The verdict on two recorded runs of the same backward passes, with its reasons and what
    was compared: the record tensor by tensor (``noise``: each entry's measured rounding noise,
    by key), then what each run printed (a value whose only reader is a ``print`` is not in the
    record)."""
    comparison = compare_records(reference.record, repaired.record, noise)
    comparison.passes = reference.backward_passes
    comparison.printed = printed_lines(reference.stdout or "")
    shown = printed_difference(reference.stdout or "", repaired.stdout or "",
                               *_TOLERANCES["torch.float32"])
    if comparison.differences:
        return Verdict.not_verified, comparison.differences[:5], comparison
    if shown:
        return Verdict.unproven, [shown + ": whether that is the script's result or noise (a time, an id) "
                                  "is not known, so nothing is proven"], comparison
    if comparison.gradients == 0:
        return Verdict.unproven, ["no gradient was compared (no backward pass ran)"], comparison
    return Verdict.verified, [], comparison


def _leaf_sites(result: ScriptRepair) -> Optional[List[tuple]]:
    """The leaf updates' lines in the original files (later rounds ran rewritten texts)."""
    sites = []
    for run, ran in zip(result.rounds, result.round_sources):
        for c in run.conflicts:
            if c["kind"] != "leaf" or not c.get("mutation"):
                continue
            path, line = c["mutation"]["file"], c["mutation"]["line"]
            text = ran.get(path)
            if text is not None:
                line = _original_line(result.originals[path], text, line)
                if line is None:
                    return None
            sites.append((path, line))
    return sites


def _original_line(original: str, current: str, line: int) -> Optional[int]:
    matcher = difflib.SequenceMatcher(None, original.splitlines(), current.splitlines(), autojunk=False)
    for a, b, size in matcher.get_matching_blocks():
        if b < line <= b + size:
            return a + (line - b)
    return None


def compare_records(reference_file: str, repaired_file: str,
                    noise: Optional[Dict[str, "torch.Tensor"]] = None) -> Comparison:
    """Every recorded tensor, key by key: same keys, dtype, shape, values within the dtype's
    tolerance relative to each entry's magnitude and, beyond it, its measured rounding noise
    (``noise``, by key: :func:`codemod.runtime.compare.close_entrywise`); integers, booleans
    exactly; complex as complex."""
    import torch

    from codemod.runtime.compare import close_entrywise  # imports torch: only where a run compares

    ref = torch.load(reference_file, weights_only=True)
    new = torch.load(repaired_file, weights_only=True)
    out = Comparison()
    for key in sorted(set(ref) ^ set(new)):
        out.differences.append(f"{key}: only in the {'reference' if key in ref else 'repaired run'}")
    for key in [k for k in ref if k in new]:
        a, b = ref[key], new[key]
        kind = key.split("/")[1] if key.startswith("pass") else key.split("/")[0]
        if a is None or b is None:
            if a is not b:
                out.differences.append(f"{key}: {'no gradient' if b is None else 'a gradient'} in the repaired run, "
                                       f"{'none' if a is None else 'one'} in the reference")
            continue
        if a.dtype != b.dtype or a.shape != b.shape:
            out.differences.append(f"{key}: {b.dtype}{tuple(b.shape)} instead of {a.dtype}{tuple(a.shape)}")
            continue
        if a.is_floating_point() or a.is_complex():
            rtol, atol = _TOLERANCES.get(str(a.real.dtype if a.is_complex() else a.dtype), (1e-5, 1e-6))
            wide = torch.complex128 if a.is_complex() else torch.float64
            same = close_entrywise(a.to(wide), b.to(wide), rtol, atol, (noise or {}).get(key))
            if a.numel():
                out.max_abs = max(out.max_abs, (a - b).abs().max().item())
        else:
            same = torch.equal(a, b)
        if not same:
            out.differences.append(f"{key}: {VALUES_DIFFER} (max abs {(a.double() - b.double()).abs().max().item():.3g})"
                                   if not a.is_complex() else f"{key}: {VALUES_DIFFER}")
        if kind.startswith("loss"):
            out.losses += 1
        elif kind == "grad":
            out.gradients += 1
        elif kind.startswith("step"):
            out.steps += 1
        else:
            out.final += 1
    return out


def write_repaired(result: ScriptRepair) -> List[str]:
    """Write every repaired file of a verified repair through the guarded writer, as it was
    read (encoding, BOM, every untouched line's ending). A file changed on disk since it was
    read is left as it is, and so are the others (checked before any is written): a repair
    of several files is written whole or not at all, save for a write that fails midway.
    What was left alone, and why, goes to ``result.errors``."""
    if result.verdict is not Verdict.verified or result.errors:
        return []
    todo = [(path, text, result.snapshot(path)) for path, text in result.repaired.items()
            if text != result.originals[path]]
    for path, _, snapshot in todo:
        try:
            if snapshot is None:
                raise FileChanged(CHANGED)
            check_unchanged(pathlib.Path(path), snapshot)
        except FileChanged as exc:
            result.errors.append(f"{display_path(path)}: {exc}")
    if result.errors:
        return []
    for path, text, snapshot in todo:
        try:
            write_atomic(pathlib.Path(path), encode_source(text, like=snapshot.data), snapshot)
        except WriteRefused as exc:
            result.errors.append(f"{display_path(path)}: {exc}")
        except UnicodeEncodeError as exc:
            result.errors.append(f"{display_path(path)}: the fix cannot be written in {exc.encoding}: not written")
        except OSError as exc:
            result.errors.append(f"{display_path(path)}: cannot write: {exc.strerror or exc}")
        else:
            result.written.append(path)
    return result.written


def render(result: ScriptRepair) -> str:
    lines = []
    for i, run in enumerate(result.rounds, 1):
        for conflict in run.conflicts:
            lines.append(f"round {i}: {conflict['describe']}")
    lines += [f"tried: {t}" for t in result.tried]
    lines += [f"fix: {a}" for a in result.actions]
    if not result.rounds or (not result.conflicts and result.rounds[0].finished):
        passes = result.rounds[0].backward_passes if result.rounds else 0
        lines.append(f"No in-place conflict in the first {passes} backward pass(es): nothing to repair.")
    if result.verdict is not None:
        c = result.comparison
        head = f"Verdict: {result.verdict.value}"
        if c is not None:
            head += (f" against {result.reference}: {c.passes} backward pass(es); compared {c.losses} "
                     f"loss(es), {c.gradients} gradient(s), {c.steps} parameter(s) after optimizer steps, "
                     f"{c.final} final parameter(s)/buffer(s), {c.printed} printed line(s); max abs difference "
                     f"{c.max_abs:.3g}")
        lines.append(head)
    if result.rounding:
        lines.append(f"  rounding noise per entry {result.rounding}")
    lines += [f"  {r}" for r in result.reasons]
    return "\n".join(lines)


def to_json(result: ScriptRepair) -> dict:
    return {
        "script": result.script.label, "args": list(result.script.args),
        "verdict": result.verdict.value if result.verdict else None,
        "reference": result.reference, "reasons": result.reasons, "actions": result.actions,
        "conflicts": [{k: v for k, v in c.items() if k != "describe"} for c in result.conflicts],
        "comparison": dataclasses.asdict(result.comparison) if result.comparison else None,
        "diff": result.diff(), "written": result.written, "errors": result.errors, "tried": result.tried,
        "rounding_noise": result.rounding or None,
    }
