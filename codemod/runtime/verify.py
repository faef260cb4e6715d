"""The verification harness: prove a rewrite by running the original and the rewritten code.

``verify("model.py::Net")`` loads the original source and the rewritten one (the passes applied
in memory, or a file of your own) as two modules, builds both with the same seed and the same
weights, runs forward and backward on the CPU and, when present, on CUDA, and compares outputs
and gradients against a reference: the original's own gradients when it runs, otherwise the
gradients of the values its forward really computed (the original run with every saved tensor
snapshotted), cross-checked with ``torch.func.functionalize`` for module targets.

Targets, pytest-style:

- ``file.py::fn``: a zero-argument callable that runs forward (and maybe backward) and returns
  tensors, a tuple/list or a dict of them. Leaves that require grad are found through the
  graph; if ``fn`` ran backward itself, their ``.grad`` is taken.
- ``file.py::Model``: an ``nn.Module`` subclass. Its constructor keywords come from
  ``init_kwargs`` (CLI ``--init '{"dim": 4}'``) or the file's ``example_init()``; its forward
  arguments from ``input_shapes`` (CLI ``--input-shape 2,4``, random normal tensors) or the
  file's ``example_inputs()`` (a tensor, a tuple of arguments, or a dict of keywords).

This module runs the user's code: only ``inplacefix verify`` (or this API) does so.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pathlib
from typing import Any, Dict, List, Optional, Sequence

import torch

from codemod.config import Settings
from codemod.encoding import decode_source
from codemod.engine.fileio import Snapshot, read_snapshot
from codemod.engine.pipeline import process_source
from codemod.runtime.harness import (
    flatten,
    is_inplace_error,
    load_module,
    max_difference,
    run,
    snapshot_saved_tensors,
)

# rtol, atol per dtype: same device, and CPU vs CUDA.
TOLERANCES = {
    torch.float64: ((1e-7, 1e-9), (1e-6, 1e-8)),
    torch.float32: ((1e-5, 1e-6), (1e-3, 1e-4)),
    torch.float16: ((1e-2, 1e-3), (1e-2, 1e-2)),
    torch.bfloat16: ((2e-2, 1e-2), (5e-2, 5e-2)),
}


class HarnessError(Exception):
    """The target could not be loaded or run at all (exit code 2)."""


@dataclasses.dataclass
class Run:
    status: str  # "ran", "inplace-error", "failed"
    error: str = ""
    outputs: List[torch.Tensor] = dataclasses.field(default_factory=list)
    grads: Dict[str, Optional[torch.Tensor]] = dataclasses.field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "ran"


@dataclasses.dataclass
class Comparison:
    output_abs: Optional[float] = None
    grad_abs: Optional[float] = None
    grad_rel: Optional[float] = None


@dataclasses.dataclass
class DeviceReport:
    device: str
    original: Run
    rewritten: Run
    reference: str  # "original", "oracle" or "none"
    comparison: Comparison
    oracle_crosscheck: Optional[str] = None  # functionalize vs snapshot oracle, as text
    problems: List[str] = dataclasses.field(default_factory=list)
    reference_run: Optional[Run] = dataclasses.field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return not self.problems


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

    @property
    def verified(self) -> bool:
        return not self.problems and all(d.ok for d in self.devices)

    def to_json(self) -> dict:
        def run(r: Run) -> dict:
            return {"status": r.status, "error": r.error or None}

        return {
            "target": self.target,
            "verified": self.verified,
            "fixes_applied": self.fixes_applied,
            "unsafe_fixes_not_applied": self.unsafe_not_applied,
            "cross_device_grad_abs": self.cross_device,
            "cross_device_note": self.cross_device_note,
            "problems": self.problems,
            "devices": [
                {
                    "device": d.device,
                    "original": run(d.original),
                    "rewritten": run(d.rewritten),
                    "reference": d.reference,
                    "output_max_abs": d.comparison.output_abs,
                    "grad_max_abs": d.comparison.grad_abs,
                    "grad_max_rel": d.comparison.grad_rel,
                    "oracle_crosscheck": d.oracle_crosscheck,
                    "problems": d.problems,
                }
                for d in self.devices
            ],
        }


# ---------------------------------------------------------------- targets
def split_target(target: str) -> tuple:
    path, sep, name = target.partition("::")
    if not sep or not name:
        raise HarnessError(f"target must look like path/to/file.py::Name, got {target!r}")
    return pathlib.Path(path), name


def read_target(path: pathlib.Path) -> Snapshot:
    """The target file as read (a regular file only); HarnessError if it cannot be read."""
    try:
        return read_snapshot(path)
    except OSError as exc:
        raise HarnessError(f"cannot read {path}: {exc.strerror or exc}") from exc


def target_text(path: pathlib.Path, data: bytes) -> str:
    """A file's text by its PEP 263 encoding, line endings kept (they are written back as read)."""
    try:
        return decode_source(data)
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        raise HarnessError(f"cannot decode {path}: {exc}") from exc


class Program:
    """One loaded source (original or rewritten) and its target."""

    def __init__(self, source: str, path: pathlib.Path, name: str, tag: str) -> None:
        try:
            self.module = load_module(source, str(path), f"inplacefix_verify_{tag}")
        except Exception as exc:
            raise HarnessError(f"cannot load {path} ({tag}): {type(exc).__name__}: {exc}") from exc
        if not hasattr(self.module, name):
            raise HarnessError(f"{path} has no {name!r}")
        self.obj = getattr(self.module, name)
        self.is_module = isinstance(self.obj, type) and issubclass(self.obj, torch.nn.Module)
        if not self.is_module and not callable(self.obj):
            raise HarnessError(f"{name!r} in {path} is neither a callable nor an nn.Module subclass")


def make_inputs(program: Program, input_shapes, device, dtype) -> tuple:
    """(args, kwargs) for forward, made on the CPU with a fixed seed (the same values for every
    device), then moved."""
    torch.manual_seed(1234)
    with torch.device("cpu"):
        if input_shapes:
            raw: Any = tuple(torch.randn(*shape) for shape in input_shapes)
        elif hasattr(program.module, "example_inputs"):
            raw = program.module.example_inputs()
        else:
            raise HarnessError("a module target needs example_inputs() in its file or --input-shape")
    args, kwargs = ((), raw) if isinstance(raw, dict) else ((raw,) if isinstance(raw, torch.Tensor) else tuple(raw), {})

    def prep(t):
        if not isinstance(t, torch.Tensor):
            return t
        t = t.detach().to(device)
        if t.is_floating_point():
            t = t.to(dtype) if dtype is not None else t
            t.requires_grad_(True)
        return t

    return tuple(prep(a) for a in args), {k: prep(v) for k, v in kwargs.items()}


def init_kwargs_for(program: Program, init_kwargs) -> dict:
    if init_kwargs is not None:
        return dict(init_kwargs)
    if hasattr(program.module, "example_init"):
        return dict(program.module.example_init())
    return {}


@contextlib.contextmanager
def _deterministic(device: str):
    previous = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        with torch.device(device):
            yield
    finally:
        torch.use_deterministic_algorithms(previous)


def _cotangents(outputs: List[torch.Tensor]) -> List[torch.Tensor]:
    """Fixed random weights for each output, so that errors cannot cancel in a plain sum."""
    gen = torch.Generator().manual_seed(99)
    return [torch.randn(o.shape, generator=gen, dtype=torch.float64, device="cpu") for o in outputs]


def _loss(outputs: List[torch.Tensor], only_grad: bool = True):
    """The weighted sum of the outputs that backward starts from."""
    terms = [
        (o.double() * w.to(o.device)).sum()
        for o, w in zip(outputs, _cotangents(outputs))
        if o.is_floating_point() and (o.requires_grad or not only_grad)
    ]
    return sum(terms) if terms else None


def _classify(exc: BaseException) -> Run:
    status = "inplace-error" if is_inplace_error(exc) else "failed"
    text = str(exc).splitlines()[0] if str(exc) else ""
    text = text.split(" Hint:", 1)[0]  # torch's hint about anomaly mode adds nothing here
    return Run(status, f"{type(exc).__name__}: {text[:300]}")


def build_model(program, init_kwargs, state, device, dtype):
    """The model, seeded and built on the CPU, with ``state`` loaded if given: the same weights
    for every run and every device."""
    torch.manual_seed(0)
    try:
        with torch.device("cpu"):
            model = program.obj(**init_kwargs)
        if state is not None:
            model.load_state_dict(state)
    except Exception as exc:
        raise HarnessError(f"cannot build {program.obj.__name__}: {type(exc).__name__}: {exc}") from exc
    model = model.to(device)
    return model.to(dtype) if dtype is not None else model


def _run_module(model, args, kwargs, snapshot=False) -> Run:
    model.train()
    args = tuple(a.detach().clone().requires_grad_(a.requires_grad) if isinstance(a, torch.Tensor) else a for a in args)
    kwargs = {k: v.detach().clone().requires_grad_(v.requires_grad) if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
    named = [(f"param:{n}", p) for n, p in model.named_parameters() if p.requires_grad]
    named += [(f"input:{i}", a) for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.requires_grad]
    named += [(f"input:{k}", v) for k, v in kwargs.items() if isinstance(v, torch.Tensor) and v.requires_grad]
    ctx = snapshot_saved_tensors() if snapshot else contextlib.nullcontext()
    torch.manual_seed(0)
    try:
        with ctx:
            outputs = flatten(model(*args, **kwargs))
            loss = _loss(outputs)
            grads = {}
            if loss is not None and named:
                found = torch.autograd.grad(loss, [t for _, t in named], allow_unused=True)
                grads = {n: (g.detach() if g is not None else None) for (n, _), g in zip(named, found)}
    except Exception as exc:
        return _classify(exc)
    return Run("ran", "", [o.detach() for o in outputs], grads)


def _run_function(program, device, dtype, snapshot=False) -> Run:
    previous = torch.get_default_dtype()
    if dtype is not None:
        torch.set_default_dtype(dtype)
    try:
        result = run(program.obj, snapshot=snapshot, loss=_loss)
    finally:
        torch.set_default_dtype(previous)
    if not result.ok:
        return _classify(result.error)
    return Run("ran", "", result.outputs, {f"leaf:{i}": g for i, g in enumerate(result.grads)})


def _functionalize_grads(program, model, args, kwargs, names) -> Optional[Dict[str, torch.Tensor]]:
    """Gradients of the original's forward values via torch.func.functionalize (a second
    oracle, independent of saved-tensor hooks). None where functionalize cannot run it."""
    from torch.func import functional_call, functionalize, grad

    params = {n: p.detach() for n, p in model.named_parameters() if p.requires_grad}
    tensor_args = [a.detach().clone() if isinstance(a, torch.Tensor) else a for a in args]

    def f(params, *inputs):  # grad() hides requires_grad from the outputs: weigh them all
        return _loss(flatten(functional_call(model, params, tuple(inputs), dict(kwargs))), only_grad=False)

    torch.manual_seed(0)

    argnums = (0,) + tuple(i + 1 for i, a in enumerate(tensor_args) if isinstance(a, torch.Tensor) and a.is_floating_point())
    try:
        found = grad(functionalize(f), argnums=argnums)(params, *tensor_args)
    except Exception:
        return None
    out = {f"param:{n}": g for n, g in found[0].items()}
    for i, g in zip(argnums[1:], found[1:]):
        out[f"input:{i - 1}"] = g
    return {n: out.get(n) for n in names}


def _compare(reference: Run, rewritten: Run, rtol: float, atol: float, problems: list) -> Comparison:
    cmp = Comparison()
    cmp.output_abs = max_difference(reference.outputs, rewritten.outputs)
    if not _close_lists(reference.outputs, rewritten.outputs, rtol, atol):
        problems.append(f"outputs differ (max abs {cmp.output_abs:.3g})")
    if set(reference.grads) != set(rewritten.grads):
        problems.append("the gradients are not taken for the same tensors")
        cmp.grad_abs = cmp.grad_rel = float("inf")
        return cmp
    keys = sorted(reference.grads)
    ref = [reference.grads[k] for k in keys]
    new = [rewritten.grads[k] for k in keys]
    cmp.grad_abs = max_difference(ref, new)
    cmp.grad_rel = _max_relative(ref, new)
    bad = [k for k, a, b in zip(keys, ref, new) if not _close(a, b, rtol, atol)]
    if bad:
        problems.append(f"gradients differ for {', '.join(bad[:5])} (max abs {cmp.grad_abs:.3g})")
    return cmp


def _close(a, b, rtol, atol) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if a.shape != b.shape:
        return False
    return bool(torch.allclose(a.double().cpu(), b.double().cpu(), rtol=rtol, atol=atol, equal_nan=True))


def _close_lists(a, b, rtol, atol) -> bool:
    return len(a) == len(b) and all(x.dtype == y.dtype and _close(x, y, rtol, atol) for x, y in zip(a, b))


def _max_relative(a, b) -> float:
    worst = 0.0
    for x, y in zip(a, b):
        if x is None or y is None or x.shape != y.shape:
            continue
        if x.numel():
            denom = x.double().abs().max().item() or 1.0
            worst = max(worst, (x.double() - y.double()).abs().max().item() / denom)
    return worst


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
) -> VerifyResult:
    """Prove (or disprove) the rewrite of ``target``: the tool's own (``settings``), the file
    ``rewritten``, or the text ``rewritten_source``. Raises HarnessError if it cannot run."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # deterministic cuBLAS
    path, name = split_target(target)
    data = read_target(path).data
    settings = settings or Settings()
    fixes = unsafe_left = 0
    if rewritten_source is not None:
        new_source = rewritten_source
    elif rewritten is not None:
        new_source = target_text(pathlib.Path(rewritten), read_target(pathlib.Path(rewritten)).data)
    else:
        result = process_source(data, str(path), settings, fix=True)
        if result.error is not None:
            raise HarnessError(f"{path}: {result.error.message}")
        new_source = result.fixed if result.changed else target_text(path, data)
        fixes = len(result.applied)
        unsafe_left = sum(f.status.value == "unsafe" and f not in result.applied for f in result.findings)
    original_source = target_text(path, data)
    original = Program(original_source, path, name, "original")
    changed = Program(new_source, path, name, "rewritten")
    if original.is_module != changed.is_module:
        raise HarnessError(f"{name!r} is a module in one version and not in the other")

    dtype = torch.float64 if float64 else None
    reports = []
    for device in devices or default_devices():
        if device.startswith("cuda") and not torch.cuda.is_available():
            raise HarnessError("CUDA was asked for, but no CUDA device is available")
        with _deterministic(device):
            reports.append(_verify_on(original, changed, device, dtype, rtol, atol, init_kwargs, input_shapes))

    result = VerifyResult(target, fixes, new_source, reports, unsafe_not_applied=unsafe_left)
    cpu = next((r for r in reports if r.device == "cpu"), None)
    gpu = next((r for r in reports if r.device.startswith("cuda")), None)
    if cpu and gpu:
        _compare_devices(result, original.is_module, cpu, gpu, rtol, atol)
    return result


def _compare_devices(result, is_module, cpu, gpu, rtol, atol) -> None:
    """The rewritten gradients on CPU and CUDA should agree, where they can."""
    if not is_module:
        result.cross_device_note = "n/a: a function target draws its own tensors on each device"
        return
    if not (cpu.rewritten.ok and gpu.rewritten.ok):
        return
    out_dtype = cpu.rewritten.outputs[0].dtype if cpu.rewritten.outputs else torch.float32
    c_rtol, c_atol = TOLERANCES.get(out_dtype, TOLERANCES[torch.float32])[1]
    rtol, atol = rtol or c_rtol, atol or c_atol
    ref_cpu, ref_gpu = cpu.reference_run, gpu.reference_run
    if ref_cpu is not None and ref_gpu is not None and not _close_lists(
        ref_cpu.outputs, [o.cpu() for o in ref_gpu.outputs], rtol, atol
    ):
        result.cross_device_note = "n/a: the reference itself differs between devices (dropout or other randomness)"
        return
    keys = sorted(cpu.rewritten.grads)
    a = [cpu.rewritten.grads[k] for k in keys]
    b = [gpu.rewritten.grads.get(k) for k in keys]
    b = [g.cpu() if g is not None else None for g in b]
    result.cross_device = max_difference(a, b)
    if not all(_close(x, y, rtol, atol) for x, y in zip(a, b)):
        result.problems.append(f"CPU and CUDA gradients disagree (max abs {result.cross_device:.3g})")


def _verify_on(original, changed, device, dtype, rtol, atol, init_kwargs, input_shapes) -> DeviceReport:
    problems: List[str] = []
    crosscheck = None
    if original.is_module:
        init = init_kwargs_for(original, init_kwargs)
        args, kwargs = make_inputs(original, input_shapes, device, dtype)
        model = build_model(original, init, None, device, dtype)
        state = {k: v.detach().clone() for k, v in model.state_dict().items()}  # before forward
        orig = _run_module(model, args, kwargs)
        new = _run_module(build_model(changed, init, state, device, dtype), args, kwargs)
        oracle = None
        if orig.status == "inplace-error":
            oracle_model = build_model(original, init, state, device, dtype)
            oracle = _run_module(oracle_model, args, kwargs, snapshot=True)
            if oracle.ok:
                oracle_model = build_model(original, init, state, device, dtype)  # buffers as before
                func = _functionalize_grads(original, oracle_model, args, kwargs, sorted(oracle.grads))
                if func is None:
                    crosscheck = "n/a (functionalize could not run this model)"
                else:
                    diff = max_difference([oracle.grads[k] for k in sorted(oracle.grads)],
                                          [func[k] for k in sorted(oracle.grads)])
                    crosscheck = f"max abs {diff:.3g}"
    else:
        orig = _run_function(original, device, dtype)
        new = _run_function(changed, device, dtype)
        oracle = _run_function(original, device, dtype, snapshot=True) if orig.status == "inplace-error" else None

    ref_dtype = next((o.dtype for o in (orig.outputs or new.outputs) if o.is_floating_point()), torch.float32)
    d_rtol, d_atol = TOLERANCES.get(ref_dtype, TOLERANCES[torch.float32])[0]
    rtol, atol = rtol or d_rtol, atol or d_atol

    if orig.ok:
        reference, ref_run = "original", orig
    elif oracle is not None and oracle.ok:
        reference, ref_run = "oracle", oracle
    else:
        reference, ref_run = "none", None
    comparison = Comparison()
    if not new.ok:
        problems.append(f"the rewritten code fails: {new.error}")
    elif ref_run is not None:
        comparison = _compare(ref_run, new, rtol, atol, problems)
    elif orig.status == "failed":
        problems.append(f"the original fails for another reason, so nothing proves the rewrite: {orig.error}")
    return DeviceReport(device, orig, new, reference, comparison, crosscheck, problems, ref_run)


# ---------------------------------------------------------------- rendering
def render_table(result: VerifyResult) -> str:
    def num(x: Optional[float]) -> str:
        return "-" if x is None else ("inf" if x == float("inf") else f"{x:.2g}")

    def run(r: Run) -> str:
        return {"ran": "ran", "inplace-error": "in-place error", "failed": "failed"}[r.status]

    rows = [("device", "original", "rewritten", "reference", "outputs max abs", "grads max abs", "grads max rel", "verdict")]
    for d in result.devices:
        rows.append((
            d.device, run(d.original), run(d.rewritten), d.reference,
            num(d.comparison.output_abs), num(d.comparison.grad_abs), num(d.comparison.grad_rel),
            "ok" if d.ok else "FAIL",
        ))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    out = [f"{result.target}: {result.fixes_applied} fix(es) applied in memory" if result.fixes_applied
           else f"{result.target}"]
    out += lines
    for d in result.devices:
        if d.original.error:
            out.append(f"{d.device}: original: {d.original.error}")
        if d.oracle_crosscheck:
            out.append(f"{d.device}: oracle cross-check (functionalize vs snapshot): {d.oracle_crosscheck}")
        for p in d.problems:
            out.append(f"{d.device}: {p}")
    if result.cross_device is not None:
        out.append(f"CPU vs CUDA, rewritten gradients: max abs {num(result.cross_device)}")
    elif result.cross_device_note:
        out.append(f"CPU vs CUDA: {result.cross_device_note}")
    out += result.problems
    out.append("Verified." if result.verified else "NOT verified.")
    if not result.verified and result.unsafe_not_applied:
        out.append(f"Hint: {result.unsafe_not_applied} unsafe fix(es) were not applied; "
                   "rerun with --unsafe-fixes to verify them too.")
    return "\n".join(out)
