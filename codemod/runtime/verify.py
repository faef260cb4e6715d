"""The verification harness: prove a rewrite by running the original and the rewritten code.

``verify("model.py::Net")`` runs the original source and the rewritten one (the passes
applied in memory, or a file of your own), each in a fresh interpreter (``isolate``), the same
way (``execute``): same seed, same initial weights and inputs, two train-mode calls each
followed by the harness's own backward, one eval-mode call, then the final state. It compares
everything the program's meaning depends on (``compare``) against a reference: the original
itself when it runs; otherwise the snapshot oracle (saved-tensor errors), the no-grad
meaning or, where the program differentiates through the update, the copy meaning (leaf
errors) of ``references``.

Three verdicts, exit code 0 only for the first:

- ``verified``: a real reference exists, the rewritten code ran, something a rewrite of the
  gradients could change was compared (a gradient, the harness's or a leaf's ``.grad``, or
  state the run changed in place, such as parameters after optimizer steps), and nothing
  differs. Outputs alone are no evidence: a rewrite can keep them and change a gradient; nor
  are gradients that are None on both sides alone (no backward reached any leaf, either way:
  a rewrite that detached everything would agree). It proves the rewrite
  computes the values the original really computed (the oracle's: what its forward used);
  it cannot prove what the author meant where the crash hid it.
- ``not verified``: something differs, or the rewrite fails.
- ``unproven``: no reference (the original fails otherwise, the oracle fails, the no-grad
  meaning does not fit) or nothing comparable.

This module runs the user's code (in child processes): only ``inplacefix verify``/``repair``
(or this API) do so.
"""

from __future__ import annotations

import dataclasses
import enum
import pathlib
import tempfile
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import torch

from codemod.config import Settings
from codemod.engine.pipeline import process_source
from codemod.runtime.compare import (
    CROSS_DEVICE_TOLERANCES,
    NOISE_FACTOR,
    VALUES_DIFFER,
    Difference,
    Tally,
    Tolerance,
    compare,
    compare_tensors,
    grad_flag_differences,
)
from codemod.runtime.execute import SideRequest, SideResult, run_side
from codemod.runtime.harness import HarnessError, Target, parse_target, read_source, read_target, split_target
from codemod.runtime.isolate import DEFAULT_TIMEOUT, Status, run_isolated, warm_up
from codemod.runtime.printed import printed_difference, printed_lines
from codemod.runtime.references import REFERENCE_NAMES, Mode
from codemod.runtime.rounding import DIRECTIONS, probe_available

__all__ = ["HarnessError", "Verdict", "VerifyResult", "DeviceReport", "verify", "render_table",
           "default_devices", "split_target"]


class Verdict(str, enum.Enum):
    VERIFIED = "verified"
    NOT_VERIFIED = "not verified"
    UNPROVEN = "unproven"


_RANK = {Verdict.VERIFIED: 0, Verdict.UNPROVEN: 1, Verdict.NOT_VERIFIED: 2}


@dataclasses.dataclass
class Comparison:
    output_abs: Optional[float] = None
    grad_abs: Optional[float] = None
    grad_rel: Optional[float] = None
    state_abs: Optional[float] = None


@dataclasses.dataclass
class Compared:
    """How much was compared: tensors per kind, plain values, and the calls."""

    outputs: int = 0
    own_grads: int = 0  # of those, gradients the program took itself (torch.autograd.grad) on both sides
    grads: int = 0  # the harness's gradients and every .grad in the final state
    grads_none: int = 0  # of those, none on both sides (no gradient reaches that leaf either way)
    grads_frozen: int = 0  # of those, at leaves the program switched out of autograd itself, on both sides
    flags_differ: int = 0  # output tensors that require grad on one side only
    state: int = 0
    changed: int = 0  # state tensors the reference run changed in place (parameters after steps)
    values: int = 0
    printed: int = 0  # lines of standard output compared
    calls: List[str] = dataclasses.field(default_factory=list)
    skipped: List[str] = dataclasses.field(default_factory=list)  # what was not compared, and why

    @property
    def evidence(self) -> int:
        """What a rewrite of the program's gradients could change: gradients, and state
        the run changed. Outputs alone prove nothing about a backward, nor does a gradient
        that is None on both sides alone (no backward reached that leaf either way: a rewrite
        that detached everything would agree). Where every such pair is at a leaf the program
        itself switched out of autograd (``requires_grad_(False)``), on both sides, the pairs
        count: they show the rewrite kept those leaves frozen, and no trainable leaf is left that
        no backward reached; one such pair beside a trainable leaf's proves nothing about it, nor
        where an output requires grad on one side only (made from the leaf before it was frozen,
        then detached by the rewrite: the same values, the same None pair)."""
        frozen = self.grads_frozen if self.grads_frozen == self.grads_none and not self.flags_differ else 0
        return self.grads - self.grads_none + frozen + self.own_grads + self.changed

    def describe(self) -> str:
        changed = f" ({self.changed} changed by the run)" if self.changed else ""
        shown = f", {self.printed} printed line(s)" if self.printed else ""
        frozen = f", {self.grads_frozen} at leaves the program froze itself" if self.grads_frozen else ""
        none = f" ({self.grads_none} of them none on both sides{frozen})" if self.grads_none else ""
        own = f" ({self.own_grads} of them gradients the program took itself)" if self.own_grads else ""
        return (f"{self.outputs} output tensor(s){own}, {self.grads} gradient(s){none}, {self.state} state tensor(s){changed}, "
                f"{self.values} other value(s){shown} over {', '.join(self.calls) or 'no call'}")


@dataclasses.dataclass
class Captured:
    stdout: str = ""
    stderr: str = ""


@dataclasses.dataclass
class DeviceReport:
    device: str
    original: SideResult
    rewritten: SideResult
    reference: str  # "original", "oracle", "no-grad meaning" or "none"
    verdict: Verdict = Verdict.UNPROVEN
    reasons: List[str] = dataclasses.field(default_factory=list)  # why not verified / unproven
    differences: List[Difference] = dataclasses.field(default_factory=list)
    comparison: Comparison = dataclasses.field(default_factory=Comparison)
    compared: Compared = dataclasses.field(default_factory=Compared)
    meaning: str = ""  # what the reference means, in words
    oracle_crosscheck: Optional[str] = None
    reference_run: Optional[SideResult] = dataclasses.field(default=None, repr=False)
    captured: Dict[str, Captured] = dataclasses.field(default_factory=dict)
    rounding: str = ""  # the rounding probe: whether each entry's noise was measured, and how
    not_run: str = ""  # a device tried by default where the original does not run as written: why

    @property
    def decides(self) -> bool:
        """Whether this device's verdict counts: not one the program does not run on as written."""
        return not self.not_run

    @property
    def ok(self) -> bool:
        return self.verdict is Verdict.VERIFIED

    @property
    def problems(self) -> List[str]:
        return self.reasons + [str(d) for d in self.differences]


@dataclasses.dataclass
class VerifyResult:
    target: str
    fixes_applied: int
    rewritten_source: str
    devices: List[DeviceReport]
    cross_device: Optional[float] = None  # max abs difference of rewritten grads, CPU vs CUDA
    cross_device_note: Optional[str] = None  # why there is no such comparison
    unsafe_not_applied: int = 0  # unsafe fixes left out of the in-memory rewrite
    problems: List[str] = dataclasses.field(default_factory=list)
    timeout: float = DEFAULT_TIMEOUT

    @property
    def verdict(self) -> Verdict:
        worst = max((d.verdict for d in self.devices if d.decides), key=_RANK.__getitem__,
                    default=Verdict.UNPROVEN)
        return Verdict.NOT_VERIFIED if self.problems else worst

    @property
    def verified(self) -> bool:
        return self.verdict is Verdict.VERIFIED

    def to_json(self) -> dict:
        def run(r: SideResult) -> dict:
            return {"status": r.status, "error": r.error or None, "failed_at": r.failed_at or None,
                    "notes": r.notes, "cost": dataclasses.asdict(r.cost)}

        return {
            "target": self.target,
            "verdict": self.verdict.value,
            "verified": self.verified,
            "fixes_applied": self.fixes_applied,
            "unsafe_fixes_not_applied": self.unsafe_not_applied,
            "timeout_s": self.timeout,
            "cross_device_grad_abs": self.cross_device,
            "cross_device_note": self.cross_device_note,
            "problems": self.problems,
            "devices": [
                {
                    "device": d.device,
                    "verdict": d.verdict.value,
                    "original": run(d.original),
                    "rewritten": run(d.rewritten),
                    "reference": d.reference,
                    "reference_meaning": d.meaning or None,
                    "compared": dataclasses.asdict(d.compared),
                    "output_max_abs": d.comparison.output_abs,
                    "grad_max_abs": d.comparison.grad_abs,
                    "grad_max_rel": d.comparison.grad_rel,
                    "state_max_abs": d.comparison.state_abs,
                    "differences": [dataclasses.asdict(x) for x in d.differences],
                    "reasons": d.reasons,
                    "oracle_crosscheck": d.oracle_crosscheck,
                    "rounding_noise": d.rounding or None,
                    "not_run": d.not_run or None,
                    "captured_output": {k: dataclasses.asdict(v) for k, v in d.captured.items()},
                }
                for d in self.devices
            ],
        }


def default_devices() -> List[str]:
    return ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]


def verify(
    target: str,
    *,
    rewritten: Optional[str] = None,
    rewritten_source: Optional[str] = None,
    settings: Optional[Settings] = None,
    devices: Optional[Sequence[str]] = None,
    float64: bool = False,
    rtol: Optional[float] = None,
    atol: Optional[float] = None,
    init_kwargs: Optional[dict] = None,
    input_shapes: Optional[Sequence[Sequence[int]]] = None,
    inputs_require_grad: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    modules: Optional[Dict[str, str]] = None,
    meaning: str = "as-computed",
    optional_devices: Optional[Sequence[str]] = None,
) -> VerifyResult:
    """Prove (or disprove) the rewrite of ``target``: the tool's own (``settings``), the file
    ``rewritten``, or the text ``rewritten_source``. Raises HarnessError if it cannot run.
    ``rtol``/``atol`` replace the per-dtype defaults (``0`` is honoured). ``modules``: other
    files of the project (path -> text) that the rewritten side imports instead of the files.
    ``meaning``: for an in-place error of a saved tensor, the reference: ``as-computed`` (the
    snapshot oracle) or ``recompute`` (the part of the forward a step made stale run again:
    the step-order repair's other meaning, ``recompute``). ``devices``: required, each decides the
    verdict; ``optional_devices``: tried too, and one where the original does not run as written
    (it fails there for another reason before any call completes, or its in-place error comes first
    and the reference run fails there so, the rewritten the same way: a program that keeps its data
    on the CPU, under CUDA) is reported as not run and decides
    nothing. Neither given: the CPU required, CUDA optional when present."""
    spec = parse_target(target, init_kwargs, input_shapes, inputs_require_grad)
    warm_up(run_side)  # the isolation server imports torch while the passes rewrite the file
    original_source = read_source(spec.path)
    new_source, fixes, unsafe_left = _rewrite(spec.path, original_source, rewritten, rewritten_source,
                                              settings or Settings())
    tol = Tolerance(rtol, atol)
    reports = []
    if devices is None and optional_devices is None:
        devices, optional_devices = ["cpu"], [d for d in default_devices() if d != "cpu"]
    required = list(devices or default_devices())
    for device in required + [d for d in optional_devices or () if d not in required]:
        if device.startswith("cuda") and not torch.cuda.is_available():
            raise HarnessError("CUDA was asked for, but no CUDA device is available")
        report = _verify_on(spec, original_source, new_source, device, float64, tol, timeout, modules or {}, meaning)
        if device not in required:
            report.not_run = _does_not_run(report)
        reports.append(report)
    result = VerifyResult(target, fixes, new_source, reports, unsafe_not_applied=unsafe_left, timeout=timeout)
    cpu = next((r for r in reports if r.device == "cpu" and r.decides), None)
    gpu = next((r for r in reports if r.device.startswith("cuda") and r.decides), None)
    if cpu and gpu:
        _compare_devices(result, cpu, gpu, rtol, atol)
    return result


def _does_not_run(report: DeviceReport) -> str:
    """Why the original does not run on this device as written, or "": it failed for a reason
    other than the in-place errors before any call completed, and the rewritten failed at the
    same point with the same error type (nothing to compare there; a rewrite that runs where
    the original cannot, or fails otherwise, is a difference and stays one)."""
    original, new, meant = report.original, report.rewritten, report.reference_run
    if original.status == "inplace-error" and meant is not None:
        # The in-place error came first; the program's meaning (the reference run) then fails
        # there for another reason, and the rewritten at the same point with the same error type.
        failed, what = meant, "after its in-place error, the run that gives its meaning fails there "
    else:
        failed, what = original, ""
    if failed.status != "failed" or failed.error_kind is not None or usable(failed) or failed.unfit:
        return ""
    if new.status != "failed" or (new.failed_at, new.error_type) != (failed.failed_at, failed.error_type):
        return ""
    return (f"the original does not run on {report.device} as written ({what}{failed.failed_at}): "
            f"{_short(failed.error)}; nothing compared there, it decides nothing "
            f"(name it with --device to require it)")


def _rewrite(path: pathlib.Path, original: str, rewritten: Optional[str], rewritten_source: Optional[str],
             settings: Settings) -> Tuple[str, int, int]:
    """(the rewritten text, fixes applied, unsafe fixes left out)."""
    if rewritten_source is not None:
        return rewritten_source, 0, 0
    if rewritten is not None:
        return read_source(pathlib.Path(rewritten)), 0, 0
    result = process_source(read_target(path).data, str(path), settings, fix=True)
    if result.error is not None:
        raise HarnessError(f"{path}: {result.error.message}")
    new_source = result.fixed if result.changed else original
    unsafe_left = sum(f.status.value == "unsafe" and f not in result.applied for f in result.findings)
    return new_source, len(result.applied), unsafe_left


def run_side_isolated(request: SideRequest, timeout: float) -> Tuple[SideResult, Captured]:
    """One side in a fresh interpreter, the target's folder first on ``sys.path``."""
    folder = str(request.target.path.resolve().parent)
    outcome = run_isolated(run_side, request, timeout=timeout, path_first=folder)
    captured = Captured(outcome.stdout, outcome.stderr)
    if outcome.ok:
        side = outcome.value
        if side.harness_error:
            raise HarnessError(side.harness_error)
        return side, captured
    if outcome.status is Status.TIMEOUT:
        return SideResult("failed", f"timed out after {timeout:g} s", failed_at="timeout"), captured
    why = str(outcome.error) if outcome.error is not None else outcome.detail
    return SideResult("failed", why[:300], failed_at="process"), captured


def _verify_on(spec: Target, original_source: str, new_source: str, device: str, float64: bool,
               tol: Tolerance, timeout: float, modules: Optional[Dict[str, str]] = None,
               meaning: str = "as-computed") -> DeviceReport:
    with tempfile.TemporaryDirectory(prefix="inplacefix-setup-") as tmp:
        setup = str(pathlib.Path(tmp) / "setup.pt")

        def side(source: str, tag: str, mode: Mode, crosscheck: bool = False, probe: str = ""):
            first = tag == "original" and mode is Mode.PLAIN and not probe  # makes the setup the others load
            request = SideRequest(spec, source, tag, mode, device, float64,
                                  setup_in=None if first else setup, setup_out=setup if first else None,
                                  crosscheck=crosscheck, modules=(modules or {}) if tag == "rewritten" else {},
                                  rounding_probe=probe)
            return run_side_isolated(request, timeout)

        original, out_original = side(original_source, "original", Mode.PLAIN)
        new, out_new = side(new_source, "rewritten", Mode.PLAIN)
        report = DeviceReport(device, original, new, "none")
        report.captured = {"original": out_original, "rewritten": out_new}
        reference = original if usable(original) else None
        reference_mode = Mode.PLAIN
        if reference is not None:
            report.reference = "original"
        elif original.status == "inplace-error":
            saved = Mode.RECOMPUTE if meaning == "recompute" else Mode.SNAPSHOT
            mode = {"leaf": Mode.NO_GRAD_LEAVES, "view": Mode.VIEW_COPIES}.get(original.error_kind or "", saved)
            while True:
                ref, out_ref = side(original_source, "original", mode, crosscheck=original.is_module)
                report.captured[REFERENCE_NAMES[mode]] = out_ref
                report.reference_run = ref
                report.oracle_crosscheck = ref.crosscheck
                report.meaning = _meaning(mode, ref)
                if not usable(ref) and not ref.unfit:
                    report.reasons.append(f"no reference: the {REFERENCE_NAMES[mode]} fails too "
                                          f"({ref.failed_at}): {ref.error}")
                elif ref.unfit:  # shown not to fit before anything failed: the next meaning, if any
                    report.reasons.append(f"no reference: the {REFERENCE_NAMES[mode]} meaning does not fit: {ref.unfit}"
                                          if mode is Mode.VIEW_COPIES else
                                          f"no reference: the {REFERENCE_NAMES[mode]} does not fit: {ref.unfit}")
                    if mode is Mode.VIEW_COPIES:
                        # In place, a later read sees the write: the meaning PyTorch gives the
                        # program where it allows the write (views allowed) is the reference.
                        mode = Mode.VIEWS_ALLOWED
                        continue
                    if mode is Mode.NO_GRAD_LEAVES:
                        # The program differentiates through the update: a copy takes it.
                        mode, no_grad_unfit = Mode.COPY_LEAVES, ref.unfit
                        continue
                else:
                    reference, reference_mode = ref, mode
                    report.reference = REFERENCE_NAMES[mode]
                    if mode in (Mode.VIEWS_ALLOWED, Mode.COPY_LEAVES):
                        report.reasons.clear()
                    if mode is Mode.COPY_LEAVES:
                        report.meaning += f"; the no-grad meaning does not fit: {no_grad_unfit}"
                break
        else:
            report.reasons.append(f"no reference: the original fails for another reason "
                                  f"({original.failed_at}): {original.error}")
        if reference is not None and not reference.ok:
            report.meaning = ((report.meaning + "; ") if report.meaning else "") + (
                f"it fails in {reference.failed_at} ({_short(reference.error)}): a rewrite must fail there the same way")

        def probe(direction: str) -> SideResult:  # loads the reference's initial weights and inputs
            return side(original_source, "original", reference_mode, probe=direction)[0]

        _judge(report, reference, new, tol, probe)
    _doubt(report, reference)
    return report


def _doubt(report: DeviceReport, reference: Optional[SideResult]) -> None:
    """Two oracles of what the forward computed that differ: which one is right is not known,
    so agreeing with one proves nothing (``unproven``)."""
    if report.verdict is Verdict.VERIFIED and reference is not None and reference.oracles_disagree:
        report.verdict = Verdict.UNPROVEN
        report.reasons.append("the reference is in doubt: the functionalize cross-check disagrees with the "
                              f"snapshot oracle ({reference.oracles_disagree})")


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def usable(side: SideResult) -> bool:
    """A side that can be a reference: it ran, or it failed for a reason other than the
    in-place errors after at least one complete call (what ran before is still compared)."""
    return side.ok or (side.status == "failed" and side.error_kind is None and bool(side.calls))


def _meaning(mode: Mode, ref: SideResult) -> str:
    if mode is Mode.SNAPSHOT:
        return "the gradients of the values the original's forward really computed (saved tensors snapshotted)"
    if mode is Mode.RECOMPUTE:
        return ("recompute: the part of the forward that an optimizer step (or another write into a parameter) "
                "made stale run again on the updated values before each backward pass, the gradients taken "
                "through it: " + ("; ".join(dict.fromkeys(ref.leaf_updates)) or "nothing run again"))
    where = "; ".join(dict.fromkeys(ref.leaf_updates)) or "none seen"
    if mode is Mode.VIEW_COPIES:
        return (f"views PyTorch refuses to modify in place replaced by copies, which took the writes, saved "
                f"tensors snapshotted: {where}")
    if mode is Mode.COPY_LEAVES:
        return ("in-place updates of leaves made out of place, on a new tensor (the leaf keeps its value, the "
                f"gradient goes through the update), saved tensors snapshotted: {where}")
    if mode is Mode.VIEWS_ALLOWED:
        return ("outputs of functions that return several views replaced by ordinary views of the same "
                "memory, views made under no_grad by detached aliases of it, the writes reaching the "
                "tensor viewed as PyTorch computes them with grad off (into a view of a leaf that requires "
                f"grad: untracked, as under torch.no_grad()): {where}")
    return f"in-place updates of leaves applied outside autograd, as under torch.no_grad(): {where}"


def _judge(report: DeviceReport, reference: Optional[SideResult], new: SideResult, tol: Tolerance,
           probe: Optional[Callable[[str], SideResult]] = None) -> None:
    same_failure = (reference is not None and not reference.ok and new.status == reference.status
                    and new.failed_at == reference.failed_at and new.error_type == reference.error_type)
    if not new.ok and not same_failure:
        report.reasons.append(f"the rewritten code fails ({new.failed_at}): {new.error}")
        report.verdict = Verdict.NOT_VERIFIED
        return
    if reference is None:
        report.verdict = Verdict.UNPROVEN
        return
    diffs, compared, comparison = compare_sides(reference, new, tol)
    explicit = tol.rtol is not None or tol.atol is not None  # --rtol/--atol are taken as they are
    if diffs and probe is not None and not explicit and all(d.what.startswith(VALUES_DIFFER) for d in diffs):
        noise = _measured_noise(report, reference, probe, tol)
        if noise:
            diffs, compared, comparison = compare_sides(reference, new, dataclasses.replace(tol, noise=noise))
    report.differences, report.compared, report.comparison = diffs, compared, comparison
    shown = _printed_difference(report, tol)
    if diffs:
        report.verdict = Verdict.NOT_VERIFIED
    elif shown:
        report.reasons.append(shown + ": whether that is the program's result or noise (a time, "
                              "an id) is not known, so nothing is proven")
        report.verdict = Verdict.UNPROVEN
    elif compared.evidence == 0:
        report.reasons.append(
            "nothing comparable that a rewrite could change: "
            + (f"no gradient reached any leaf on either side (the {compared.grads} compared were none on both "
               "sides, as they would be if the rewrite detached everything)" if compared.grads_none else
               "no gradient (the harness's backward reached no leaf, and no leaf has a .grad)")
            + " and no state the run changed"
            + (f" ({compared.outputs} output tensor(s) agree)" if compared.outputs else ""))
        report.verdict = Verdict.UNPROVEN
    else:
        report.verdict = Verdict.VERIFIED


def _measured_noise(report: DeviceReport, reference: SideResult, probe: Callable[[str], SideResult],
                    tol: Tolerance) -> Dict[str, torch.Tensor]:
    """Each compared tensor's rounding noise, entry by entry: the larger of the reference against
    the rounding probes (the same run, every operation rounded upward, then downward). Only where
    values differ beyond each entry's own magnitude: a right rewrite rarely needs it, and it costs
    two runs. A probe that cannot run or fails measures nothing: each entry keeps its own bound."""
    if not probe_available():
        report.rounding = "not measured: this machine cannot set the rounding mode"
        return {}
    noise: Dict[str, torch.Tensor] = {}
    failed = []
    for direction in DIRECTIONS:
        try:
            run = probe(direction)
        except HarnessError as exc:
            failed.append(f"rounded {direction}: {_short(str(exc))}")
            continue
        if not usable(run):
            failed.append(f"rounded {direction}, it fails ({run.failed_at}): {_short(run.error)}")
            continue
        measured: Dict[str, torch.Tensor] = {}
        compare_sides(reference, run, dataclasses.replace(tol, record=measured))
        for where, delta in measured.items():
            noise[where] = torch.maximum(noise[where], delta) if where in noise else delta
    if len(failed) == len(DIRECTIONS):
        report.rounding = "not measured: the probes failed (" + "; ".join(failed) + ")"
        return {}
    report.rounding = (f"measured over {len(noise)} tensor(s) (the reference run again rounded upward, then "
                       f"downward): each entry may differ by {NOISE_FACTOR:g} times its own noise"
                       + (f"; one direction only ({failed[0]})" if failed else ""))
    return noise


def _printed_difference(report: DeviceReport, tol: Tolerance) -> Optional[str]:
    """What the rewritten run printed against what the reference printed; counts the lines."""
    reference, rewritten = report.captured.get(report.reference), report.captured.get("rewritten")
    if reference is None or rewritten is None:
        return None
    report.compared.printed = printed_lines(reference.stdout)
    return printed_difference(reference.stdout, rewritten.stdout, *tol.of(torch.float32))


def compare_sides(ref: SideResult, new: SideResult, tol: Tolerance):
    """Every call's outputs, gradients and inputs afterwards, then the final state."""
    diffs: List[Difference] = []
    compared = Compared()
    cmp = Comparison()
    if ref.status != new.status:
        diffs.append(Difference("run", f"{ref.status} -> {new.status}"))
    if len(ref.calls) != len(new.calls):
        diffs.append(Difference("run", f"{len(ref.calls)} call(s) -> {len(new.calls)}"))
    for a, b in zip(ref.calls, new.calls):
        if a.label != b.label:
            diffs.append(Difference("run", f"{a.label} -> {b.label}"))
            continue
        if a.error or b.error:
            if a.error_kind in ("saved", "leaf", "view", "unfit", "harness"):
                compared.skipped.append(f"{a.label}: the reference fails there ({a.error})")
            elif not b.error:
                diffs.append(Difference(a.label, f"fails before, not after: {a.error}"))
            elif not a.error:
                diffs.append(Difference(a.label, f"fails after the rewrite: {b.error}"))
            elif a.error.split(":", 2)[-1] != b.error.split(":", 2)[-1]:
                diffs.append(Difference(a.label, f"fails otherwise: {a.error} -> {b.error}"))
            continue
        compared.calls.append(a.label)
        outputs = compare(a.outputs, b.outputs, f"{a.label}: output", tol, diffs)
        compared.flags_differ += len(grad_flag_differences(a.outputs, b.outputs, f"{a.label}: output"))
        compared.outputs += outputs.tensors
        compared.own_grads += min(a.own_grads, b.own_grads)
        compared.values += outputs.values
        cmp.output_abs = _max(cmp.output_abs, outputs.max_abs)
        if a.freed != b.freed:
            # Whether a graph still holds its buffers depends on which ops saved tensors, which
            # a right rewrite may change; each leaf's .grad is compared in the final state.
            compared.skipped.append(f"{a.label}: gradients (an earlier backward freed the graph of "
                                    f"{_outputs(a.freed)} before, of {_outputs(b.freed)} after)")
        elif set(a.grads) != set(b.grads):
            only_a = sorted(set(a.grads) - set(b.grads))
            only_b = sorted(set(b.grads) - set(a.grads))
            diffs.append(Difference(f"{a.label}: gradients", "not taken for the same tensors"
                                    + (f" (only before: {', '.join(only_a[:4])})" if only_a else "")
                                    + (f" (only after: {', '.join(only_b[:4])})" if only_b else "")))
        grads = Tally()
        common = sorted(set(a.grads) & set(b.grads)) if a.freed == b.freed else []
        for key in common:
            grads.add(compare_tensors(a.grads[key], b.grads[key], f"{a.label}: grad {key}", tol, diffs))
        compared.grads += len(common)  # "no gradient reaches it" on both sides is compared too
        compared.grads_none += sum(1 for key in common if a.grads[key] is None and b.grads[key] is None)
        compared.grads_frozen += sum(1 for key in common if a.grads[key] is None and b.grads[key] is None
                                     and key in a.frozen and key in b.frozen)
        for key in sorted(set(common) & (set(a.frozen) ^ set(b.frozen))):
            diffs.append(Difference(f"{a.label}: grad {key}", "switched out of autograd by the program "
                                    + ("before, not after" if key in a.frozen else "after, not before")))
        cmp.grad_abs = _max(cmp.grad_abs, grads.max_abs)
        cmp.grad_rel = _max(cmp.grad_rel, grads.max_rel)
        inputs = compare(a.inputs_after, b.inputs_after, f"{a.label}: inputs afterwards", tol, diffs)
        compared.values += inputs.values
    if ref.state is not None and new.state is not None:
        state = compare(ref.state, new.state, "final state", tol, diffs)
        items = getattr(ref.state, "items", {})
        new_items = getattr(new.state, "items", {})
        grads_in_state = sum(1 for k in items if k.endswith(".grad") and k in new_items)
        compared.grads += grads_in_state
        compared.grads_none += sum(1 for k in items if k.endswith(".grad") and k in new_items
                                   and items[k] is None and new_items[k] is None)
        compared.state += state.tensors - grads_in_state
        compared.changed += sum(1 for k in ref.changed if k in items and k in new_items)
        compared.values += state.values
        cmp.state_abs = state.max_abs
    elif ref.state is not None or new.state is not None:
        diffs.append(Difference("final state", "taken on one side only"))
    return diffs, compared, cmp


def _outputs(freed: Tuple[int, ...]) -> str:
    return ", ".join(f"output {i}" for i in freed) if freed else "no output"


def _max(a: Optional[float], b: Optional[float]) -> Optional[float]:
    if a is None:
        return b
    return a if b is None else max(a, b)


def _compare_devices(result: VerifyResult, cpu: DeviceReport, gpu: DeviceReport, rtol, atol) -> None:
    """The rewritten gradients on CPU and CUDA should agree, where they can."""
    if not cpu.rewritten.is_module:
        result.cross_device_note = "n/a: a function target draws its own tensors on each device"
        return
    if not (cpu.rewritten.ok and gpu.rewritten.ok and cpu.rewritten.calls and gpu.rewritten.calls):
        return
    tol = Tolerance(rtol, atol, CROSS_DEVICE_TOLERANCES)
    ref_cpu, ref_gpu = cpu.reference_run or cpu.original, gpu.reference_run or gpu.original
    if ref_cpu.ok and ref_gpu.ok and ref_cpu.calls and ref_gpu.calls:
        check: List[Difference] = []
        compare(ref_cpu.calls[0].outputs, ref_gpu.calls[0].outputs, "reference", tol, check)
        if check:
            result.cross_device_note = "n/a: the reference itself differs between devices (dropout or other randomness)"
            return
    if ref_cpu.calls and ref_gpu.calls and not ref_cpu.calls[0].error and not ref_gpu.calls[0].error:
        # Each entry's noise across devices: the reference's own gradients on both, entry by entry.
        noise: Dict[str, torch.Tensor] = {}
        ra, rb = ref_cpu.calls[0].grads, ref_gpu.calls[0].grads
        for key in sorted(set(ra) & set(rb)):
            compare_tensors(ra[key], rb[key], f"grad {key}", dataclasses.replace(tol, record=noise), [])
        tol = dataclasses.replace(tol, noise=noise)
    a, b = cpu.rewritten.calls[0].grads, gpu.rewritten.calls[0].grads
    diffs: List[Difference] = []
    tally = Tally()
    for key in sorted(set(a) | set(b)):
        tally.add(compare_tensors(a.get(key), b.get(key), f"grad {key}", tol, diffs))
    result.cross_device = tally.max_abs if tally.max_abs is not None else 0.0
    if diffs:
        result.problems.append(f"CPU and CUDA gradients disagree: {diffs[0]}")


# ---------------------------------------------------------------- rendering
def _num(x: Optional[float]) -> str:
    return "-" if x is None else ("inf" if x == float("inf") else f"{x:.2g}")


def _bytes(n: Optional[int]) -> str:
    if n is None:
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def _status(r: SideResult) -> str:
    if r.status == "failed" and r.calls:
        return f"failed in call {len([c for c in r.calls if c.label.startswith('train')]) + 1}"
    return {"ran": "ran", "exited": "ran (exit 0)", "inplace-error": "in-place error", "failed": "failed"}[r.status]


def cost_lines(d: DeviceReport) -> List[str]:
    """What the fix costs: saved-for-backward bytes, time, CUDA peak, original vs rewritten."""
    lines = []
    for tag, side in (("original", d.original), ("rewritten", d.rewritten)):
        c = side.cost
        if not side.ok and tag == "original":
            continue
        if c.saved_bytes is None and c.seconds is None:
            continue
        parts = [f"saved for backward {_bytes(c.saved_bytes)}", f"forward+backward {c.seconds * 1e3:.1f} ms"
                 if c.seconds is not None else "forward+backward -"]
        if c.peak_cuda_bytes is not None:
            parts.append(f"peak CUDA memory {_bytes(c.peak_cuda_bytes)}")
        lines.append(f"{d.device}: cost, {tag}: {', '.join(parts)}")
    o, n = d.original.cost.saved_bytes, d.rewritten.cost.saved_bytes
    if d.original.ok and o and n is not None and n != o:
        lines.append(f"{d.device}: the rewrite saves {n / o:.2f}x the bytes for backward")
    return lines


def render_table(result: VerifyResult) -> str:
    rows = [("device", "original", "rewritten", "reference", "outputs max abs", "grads max abs",
             "state max abs", "verdict")]
    for d in result.devices:
        rows.append((d.device, _status(d.original), _status(d.rewritten), d.reference,
                     _num(d.comparison.output_abs), _num(d.comparison.grad_abs), _num(d.comparison.state_abs),
                     "not run" if d.not_run else d.verdict.value))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    out = [f"{result.target}: {result.fixes_applied} fix(es) applied in memory" if result.fixes_applied
           else f"{result.target}"]
    out += lines
    for d in result.devices:
        if d.not_run:
            out.append(f"{d.device}: not run: {d.not_run}")
            continue
        if d.original.error:
            out.append(f"{d.device}: original ({d.original.failed_at}): {d.original.error}")
        if d.meaning and d.reference != "none":
            out.append(f"{d.device}: reference = {d.reference}: {d.meaning}")
        if d.oracle_crosscheck:
            out.append(f"{d.device}: oracle cross-check (functionalize vs snapshot): {d.oracle_crosscheck}")
        if d.compared.calls:
            out.append(f"{d.device}: compared {d.compared.describe()}")
        if d.rounding:
            out.append(f"{d.device}: rounding noise per entry {d.rounding}")
        for skipped in d.compared.skipped:
            out.append(f"{d.device}: not compared: {skipped}")
        for note in dict.fromkeys(d.original.notes + d.rewritten.notes):
            out.append(f"{d.device}: note: {note}")
        out += cost_lines(d)
        for reason in d.reasons:
            out.append(f"{d.device}: {reason}")
        for diff in d.differences[:12]:
            out.append(f"{d.device}: differs: {diff}")
        if len(d.differences) > 12:
            out.append(f"{d.device}: ... and {len(d.differences) - 12} more difference(s)")
        for tag, cap in d.captured.items():
            text = (cap.stdout + cap.stderr).strip()
            if text:
                shown = text.splitlines()
                out.append(f"{d.device}: output of the {tag} run ({len(shown)} line(s)):")
                out += [f"    {line}" for line in shown[:8]]
                if len(shown) > 8:
                    out.append("    ...")
    if result.cross_device is not None:
        out.append(f"CPU vs CUDA, rewritten gradients: max abs {_num(result.cross_device)}")
    elif result.cross_device_note:
        out.append(f"CPU vs CUDA: {result.cross_device_note}")
    out += result.problems
    verdict = result.verdict
    out.append({Verdict.VERIFIED: "Verified.", Verdict.NOT_VERIFIED: "NOT verified.",
                Verdict.UNPROVEN: "Unproven: nothing proves or disproves the rewrite."}[verdict])
    if verdict is not Verdict.VERIFIED and result.unsafe_not_applied:
        out.append(f"Hint: {result.unsafe_not_applied} unsafe fix(es) were not applied; "
                   "rerun with --unsafe-fixes to verify them too.")
    return "\n".join(out)
