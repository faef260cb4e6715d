"""One side of a verification (original, reference or rewritten), run inside the isolated child.

:func:`run_side` loads the source, calls the target the same way on every side, and returns
a :class:`SideResult` made only of the tool's own types (see ``compare.encode``):

- a module target: built with seed 0 (or loaded with the original's initial state), called
  twice in train mode (state such as buffers carried from the first call to the second, each
  call followed by the harness's own backward to every parameter and every input that
  requires grad), then once in eval mode under ``no_grad``, then once more in train mode on
  a copy of the model with every floating input requiring grad (a rewrite that detaches an
  input changes only that gradient); then the final state;
- a function target: called twice, each call followed by the harness's own backward to every
  leaf that requires grad (keyed by where it is reachable from, else by the order leaves
  first appear; an output whose graph the program's own backward freed is left out, the
  others differentiated one by one); then the final state: every tensor, parameter, buffer
  and optimizer state reachable from the module's globals and from the return value, with
  their ``.grad``, and every other leaf the run used: its ``.grad``, and its value where the
  run changed it after reading it (the parameters of a model built inside, after its steps).

The first thing that fails ends the side; what failed, where, and how is part of the result.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import os
import time
import types
from typing import Any, Dict, List, Optional, Tuple

import torch

from codemod.runtime.compare import Node, Plain, encode, iter_tensors, module_state
from codemod.runtime.harness import (
    HarnessError,
    Program,
    Target,
    build_model,
    fresh_inputs,
    graph_leaves,
    init_kwargs_for,
    inplace_error_kind,
    make_inputs,
    seed_everything,
    weighted_loss,
    weighted_terms,
)
from codemod.runtime.isolate import describe
from codemod.runtime.references import (
    LeafWatch,
    Mode,
    SavedTensors,
    deterministic,
    functionalize_grads,
    version_of,
)
from codemod.runtime.rounding import rounding

CALLS = 2  # train-mode calls per side: the second sees the state the first left


@dataclasses.dataclass
class SideRequest:
    target: Target
    source: str
    tag: str  # "original", "rewritten"
    mode: Mode
    device: str
    float64: bool = False
    setup_in: Optional[str] = None  # the original's initial weights and inputs (torch.save)
    setup_out: Optional[str] = None
    crosscheck: bool = False  # run the functionalize oracle too (snapshot mode, modules)
    modules: Dict[str, str] = dataclasses.field(default_factory=dict)  # other files' texts to import instead
    rounding_probe: str = ""  # "upward", "downward": every CPU float operation rounded so (``rounding``)


@dataclasses.dataclass
class CallRecord:
    label: str  # "train call 1", "eval call"
    outputs: Node
    grads: Dict[str, Optional[torch.Tensor]]  # harness backward, by stable key
    inputs_after: Node  # the call's inputs after it ran (a call may mutate them)
    freed: Tuple[int, ...] = ()  # outputs whose graph an earlier backward had freed (no gradient)
    error: str = ""  # the probe call with inputs that require grad: how it failed
    error_kind: Optional[str] = None  # "saved", "leaf", "view", or "unfit" (the reference does not fit there)
    own_grads: int = 0  # outputs that are gradients the program took itself (torch.autograd.grad)
    frozen: Tuple[str, ...] = ()  # keys of the leaves the program switched out of autograd (requires_grad off)


@dataclasses.dataclass
class Cost:
    # Of the last train call: the first pays one-time start-up costs of a fresh process.
    saved_bytes: Optional[int] = None  # distinct tensors saved for backward
    seconds: Optional[float] = None  # forward + the harness's backward
    peak_cuda_bytes: Optional[int] = None


@dataclasses.dataclass
class SideResult:
    status: str = "ran"  # "ran", "exited" (sys.exit(0) after its work), "inplace-error", "failed"
    error: str = ""
    error_kind: Optional[str] = None  # "saved", "leaf", "view" for the in-place errors
    error_type: str = ""
    failed_at: str = ""  # "load", "build", "train call 1", "backward of train call 1", ...
    calls: List[CallRecord] = dataclasses.field(default_factory=list)
    state: Optional[Node] = None
    cost: Cost = dataclasses.field(default_factory=Cost)
    notes: List[str] = dataclasses.field(default_factory=list)
    leaf_updates: List[str] = dataclasses.field(default_factory=list)  # no-grad meaning: where applied
    changed: List[str] = dataclasses.field(default_factory=list)  # state keys the run changed in place
    unfit: Optional[str] = None  # why the reference (no-grad, copy, writes into copies) does not fit
    crosscheck: Optional[str] = None
    oracles_disagree: Optional[str] = None  # the cross-check's first disagreement with the snapshot oracle
    harness_error: Optional[str] = None
    is_module: bool = False

    @property
    def ok(self) -> bool:
        return self.status in ("ran", "exited")


class _Stop(Exception):
    """Ends a side after a failure has been recorded."""


def run_side(request: SideRequest) -> SideResult:
    """The child's entry point (pass it to ``run_isolated``)."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # deterministic cuBLAS
    result = SideResult()
    dtype = torch.float64 if request.float64 else None
    if request.modules:  # a repair's rewritten project files, imported from memory
        from codemod.runtime.rewritten_imports import use_sources

        use_sources(request.modules)
    try:
        with deterministic(request.device), (rounding(request.rounding_probe) if request.rounding_probe else contextlib.nullcontext()):
            _run(request, result, dtype)
    except _Stop:
        pass
    except HarnessError as exc:
        result.harness_error = str(exc)
    return result


def _fail(result: SideResult, where: str, exc: BaseException) -> None:
    error = describe(exc)
    first = (error.message.splitlines() or [""])[0].split(" Hint:", 1)[0]
    result.error = f"{error.type}: {first[:300]}" if first else error.type
    result.error_type = error.type
    result.error_kind = inplace_error_kind(error.type, error.message)
    result.status = "inplace-error" if result.error_kind else "failed"
    result.failed_at = where
    raise _Stop


def _later_failure(result: SideResult, call: int) -> bool:
    """A failure after the first call that is not an in-place error: the side keeps what ran
    before it and its state at that point (a version that fails there the same way agrees)."""
    if call == 1 or result.error_kind is not None:
        return False
    result.notes.append(f"{result.failed_at} failed ({result.error_type}): the calls before it and "
                        "the state at that point are compared")
    return True


def _exit_code_zero(exc: BaseException) -> bool:
    return isinstance(exc, SystemExit) and exc.code in (0, None)


def _run(request: SideRequest, result: SideResult, dtype) -> None:
    target = request.target
    seed_everything(0)
    previous_dtype = torch.get_default_dtype()
    try:
        if dtype is not None:
            torch.set_default_dtype(dtype)
        try:  # saves made at import time get the side's hooks too (the oracle covers them)
            with SavedTensors(snapshot=_snapshots(request.mode)).hooks():
                program = Program(request.source, target.path, target.name)
        except HarnessError:
            raise
        except BaseException as exc:  # noqa: BLE001 - the user's module failed to load
            _fail(result, "load", exc)
    finally:
        torch.set_default_dtype(previous_dtype)
    result.is_module = program.is_module
    if program.is_module:
        _run_module(request, result, program, dtype)
    else:
        _run_function(request, result, program, dtype)


# ---------------------------------------------------------------- module targets
def _run_module(request: SideRequest, result: SideResult, program: Program, dtype) -> None:
    target, device = request.target, request.device
    setup = _load_setup(request.setup_in)
    try:
        with torch.device("cpu"):
            init = init_kwargs_for(program, target)
            args, kwargs = (setup["args"], setup["kwargs"]) if setup else make_inputs(program, target)
            model = build_model(program, init, setup["state"] if setup else None, device, dtype)
    except HarnessError:
        raise
    except BaseException as exc:  # noqa: BLE001
        _fail(result, "build", exc)
    initial = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    _save_setup(request.setup_out, {"state": initial, "args": args, "kwargs": kwargs}, result)
    # A module's leaves are keyed by name: the watch is only needed for the no-grad meaning
    # (and stays out of the way of code that cares about torch function modes).
    watch = _fresh_watch(request)
    for k in range(1, CALLS + 1):
        label = f"train call {k}"
        model.train()
        a, kw = fresh_inputs(args, kwargs, device, dtype)
        keyed = [(f"param:{n}", p) for n, p in model.named_parameters() if p.requires_grad]
        keyed += [(f"input:{i}", t) for i, t in enumerate(a) if isinstance(t, torch.Tensor) and t.requires_grad]
        keyed += [(f"input:{n}", t) for n, t in kw.items() if isinstance(t, torch.Tensor) and t.requires_grad]
        saved = SavedTensors(snapshot=_snapshots(request.mode))
        seed_everything(k)
        if k == CALLS:
            reset_peak(device)
        start = _clock(device)
        try:
            with saved.hooks(), watch:
                try:
                    out = model(*a, **kw)
                except BaseException as exc:  # noqa: BLE001
                    _fail(result, label, exc)
                _outputs_read(watch, out)
                grads, freed = _backward(result, f"backward of {label}", out, keyed)
        except _Stop:
            if not _later_failure(result, k):
                raise
            break
        if k == CALLS:
            result.cost = Cost(saved.bytes, _clock(device) - start, _peak(device))
        result.calls.append(CallRecord(label, encode(out), grads, encode((a, kw)), freed))
    if result.status != "failed":
        model.eval()
        a, kw = fresh_inputs(args, kwargs, device, dtype)
        seed_everything(CALLS + 1)
        try:
            with torch.no_grad(), watch:
                out = model(*a, **kw)
        except BaseException as exc:  # noqa: BLE001
            _fail(result, "eval call", exc)
        result.calls.append(CallRecord("eval call", encode(out), {}, encode((a, kw))))
        probe = _probe_with_input_grads(request, model, args, kwargs, dtype)
        if probe is not None:
            result.calls.append(probe)
    state: Dict[str, Any] = dict(module_state(model))
    state.update({f"{n}.grad": p.grad for n, p in model.named_parameters() if p.grad is not None})
    state.update(_plain_attributes(model))
    result.state = encode(state)
    if isinstance(watch, LeafWatch):
        _finish_watch(result, watch)
    _finish_copies(result, watch)
    if request.crosscheck and request.mode is Mode.SNAPSHOT:
        result.crosscheck, result.oracles_disagree = _crosscheck(program, init, initial, args, kwargs, device, dtype,
                                                                 result.calls[0])


PROBE = "train call with inputs that require grad"


def _probe_with_input_grads(request: SideRequest, model, args, kwargs, dtype) -> Optional[CallRecord]:
    """One more train call, on a copy of the model (its state is not the program's), with
    every floating input requiring grad: a rewrite that cuts the inputs off the graph
    (``self.fc(x.detach())``) changes their gradients, which calls with inputs that do not
    require grad cannot see. None where the inputs already require grad (or none floats).
    A failure is recorded on the call, not the side: the reference may fail there (an input
    written in place is a leaf now), and then that call proves nothing either way."""
    a, kw = fresh_inputs(args, kwargs, request.device, dtype)
    tensors = [t for t in (*a, *kw.values()) if isinstance(t, torch.Tensor)]
    raised = [t for t in tensors if not t.requires_grad and (t.is_floating_point() or t.is_complex())]
    if not raised:
        return None
    for t in raised:
        t.requires_grad_(True)
    try:
        probe = copy.deepcopy(model)
    except Exception as exc:  # noqa: BLE001 - a model deepcopy cannot copy: say so on the call
        return CallRecord(PROBE, Plain(None, "NoneType"), {}, Plain(None, "NoneType"),
                          error=f"the model cannot be copied ({type(exc).__name__})", error_kind="harness")
    probe.train()
    keyed = [(f"param:{n}", p) for n, p in probe.named_parameters() if p.requires_grad]
    keyed += [(f"input:{i}", t) for i, t in enumerate(a) if isinstance(t, torch.Tensor) and t.requires_grad]
    keyed += [(f"input:{n}", t) for n, t in kw.items() if isinstance(t, torch.Tensor) and t.requires_grad]
    watch = _fresh_watch(request)
    if isinstance(watch, LeafWatch):
        watch.exempt = {id(t) for t in raised}  # the harness made them leaves, not the program
    seed_everything(CALLS + 2)
    scratch = SideResult()
    try:
        with SavedTensors(snapshot=_snapshots(request.mode)).hooks(), watch:
            try:
                out = probe(*a, **kw)
            except BaseException as exc:  # noqa: BLE001
                _fail(scratch, PROBE, exc)
            _outputs_read(watch, out)
            grads, freed = _backward(scratch, f"backward of the {PROBE}", out, keyed)
    except _Stop:
        return CallRecord(PROBE, Plain(None, "NoneType"), {}, Plain(None, "NoneType"),
                          error=f"{scratch.failed_at}: {scratch.error}", error_kind=scratch.error_kind or "failed")
    unfit = getattr(watch, "unfit", None)
    if unfit:
        return CallRecord(PROBE, Plain(None, "NoneType"), {}, Plain(None, "NoneType"),
                          error=f"the reference does not fit there: {unfit}", error_kind="unfit")
    return CallRecord(PROBE, encode(out), grads, encode((a, kw)), freed)


def _snapshots(mode: Mode) -> bool:
    """The oracle snapshots what autograd saves; so do the copy meaning (the copy takes the
    update, the writes after it are the program's own and judged the oracle's way) and writes
    into copies for the same reason (a copy of a view written again after autograd saved it,
    ``scatter_`` in a loop, is a saved-tensor conflict of its own: its meaning is the oracle's);
    and views allowed, where a write reaching the tensor viewed changes what autograd saved of it
    (a ReLU's output, a column next to the one written), the same way."""
    return mode in (Mode.SNAPSHOT, Mode.COPY_LEAVES, Mode.VIEW_COPIES, Mode.VIEWS_ALLOWED)


def _fresh_watch(request: SideRequest):
    """What the side's mode runs under, new (a probe's findings stay out of the side's)."""
    if request.mode in (Mode.NO_GRAD_LEAVES, Mode.COPY_LEAVES):
        return LeafWatch(no_grad_leaves=request.mode is Mode.NO_GRAD_LEAVES, copy_leaves=request.mode is Mode.COPY_LEAVES)
    return _view_copies(request)


def _crosscheck(program, init, initial, args, kwargs, device, dtype, first: CallRecord) -> Tuple[str, Optional[str]]:
    """The functionalize oracle against the snapshot oracle's first call: the line to show, and
    the first disagreement (None where they agree or the cross-check does not apply)."""
    from codemod.runtime.compare import Difference, Tolerance, compare_tensors

    model = build_model(program, init, initial, device, dtype)
    model.train()
    a, kw = fresh_inputs(args, kwargs, device, dtype)
    names = sorted(first.grads)
    found = functionalize_grads(model, a, kw, names, weighted_loss, lambda: seed_everything(1))  # train call 1's draws
    if found.grads is None:
        return f"n/a ({found.why_not})", None
    worst = 0.0
    diffs: List[Difference] = []
    for name in names:
        tally = compare_tensors(first.grads[name], found.grads.get(name), name, Tolerance(), diffs)
        worst = max(worst, tally.max_abs or 0.0)
    return f"max abs {worst:.3g}" + (f" ({len(diffs)} disagree)" if diffs else ""), (str(diffs[0]) if diffs else None)


# ---------------------------------------------------------------- function targets
def _run_function(request: SideRequest, result: SideResult, program: Program, dtype) -> None:
    device = request.device
    # Views allowed: with grad off, a write into a view of a leaf that requires grad reaches the
    # leaf untracked (the no-grad meaning, with its own checks of where it does not fit).
    watch = LeafWatch(no_grad_leaves=request.mode in (Mode.NO_GRAD_LEAVES, Mode.VIEWS_ALLOWED),
                      copy_leaves=request.mode is Mode.COPY_LEAVES)
    copies = _view_copies(request)
    previous_dtype = torch.get_default_dtype()
    out: Any = None
    before = {id(t): version_of(t) for t in _reachable_tensors(program, None).values()}
    try:
        if dtype is not None:
            torch.set_default_dtype(dtype)
        for k in range(1, CALLS + 1):
            label = f"train call {k}"
            saved = SavedTensors(snapshot=_snapshots(request.mode))
            first_leaf = len(watch.leaves)
            backwards = watch.backwards
            seed_everything(k - 1)
            if k == CALLS:
                reset_peak(device)
            start = _clock(device)
            exited = False
            try:
                with saved.hooks(), watch, copies:
                    try:
                        out = program.obj()
                    except BaseException as exc:  # noqa: BLE001
                        if not _exit_code_zero(exc):
                            _fail(result, label, exc)
                        exited, out = True, None
                    _outputs_read(copies, out)
                    keyed = _function_leaves(program, out, watch, first_leaf)
                    watch.harness_backward = True
                    try:
                        grads, freed = ({}, ()) if exited else _backward(result, f"backward of {label}", out, keyed,
                                                                         own_backward=watch.backwards > backwards)
                    finally:
                        watch.harness_backward = False
            except _Stop:
                if not _later_failure(result, k):
                    raise
                out = None
                break
            if k == CALLS:
                result.cost = Cost(saved.bytes, _clock(device) - start, _peak(device))
            result.calls.append(CallRecord(label, encode(out), grads, Plain(None, "NoneType"), freed,
                                           own_grads=_own_gradients(out, watch), frozen=_frozen(keyed)))
            if exited:
                result.status = "exited"
                result.notes.append(f"{label} ended with sys.exit(0): its state is compared, nothing after it")
                break
    except _Stop:
        # The side failed: whether its meaning was already shown not to fit is still said.
        result.unfit = watch.unfit or getattr(copies, "unfit", None)
        raise
    finally:
        torch.set_default_dtype(previous_dtype)
    state, tensors = _reachable_state(program, out, watch)
    result.state = encode(state)
    # Changed in place by the run: since the start (a global's), or since first read (a leaf's).
    seen = {id(t): i for i, t in enumerate(watch.leaves)}
    moved = set(watch.changed())
    result.changed = [key for key, t in tensors.items()
                      if (id(t) in before and version_of(t) != before[id(t)]) or seen.get(id(t), -1) in moved]
    _finish_watch(result, watch)
    _finish_copies(result, copies)


def _own_gradients(out: Any, watch: LeafWatch) -> int:
    """How many output tensors are gradients the program took itself (``torch.autograd.grad``
    and what ``torch.autograd.functional`` builds from it, not ``.grad``): compared as outputs,
    they are gradients a rewrite could change (``own_gradients``)."""
    return watch.own_gradients.count(iter_tensors(out))


def _frozen(keyed) -> Tuple[str, ...]:
    """The keys of the leaves the program switched out of autograd during the run: the run
    saw each one require grad (``LeafWatch.note``), and it does not any more
    (``requires_grad_(False)``, ``.requires_grad = False``, ``detach_()``)."""
    return tuple(key for key, t in keyed if not t.requires_grad)


def _view_copies(request: SideRequest):
    """A reference of the view family (writes into copies, views allowed), the recompute
    meaning's (``recompute``), or nothing."""
    from codemod.runtime.view_copies import ViewsAllowed, WritesIntoCopies

    if request.mode is Mode.RECOMPUTE:
        from codemod.runtime.recompute import RecomputeAfterStep

        return RecomputeAfterStep()
    if request.mode is Mode.VIEWS_ALLOWED:
        return ViewsAllowed()
    return WritesIntoCopies() if request.mode is Mode.VIEW_COPIES else contextlib.nullcontext()


def _outputs_read(copies, out: Any) -> None:
    from codemod.runtime.view_copies import WritesIntoCopies

    if isinstance(copies, WritesIntoCopies):
        copies.read_outputs(out)


def _finish_copies(result: SideResult, copies) -> None:
    """Where the copies took writes, and whether the reference fits (``view_copies``)."""
    from codemod.runtime.view_copies import ViewsAllowed, WritesIntoCopies

    if isinstance(copies, WritesIntoCopies):
        result.leaf_updates = list(dict.fromkeys(copies.writes))
        result.unfit = result.unfit or copies.unfit
    elif hasattr(copies, "replays"):  # the recompute meaning (``recompute``)
        result.leaf_updates = list(dict.fromkeys(copies.replays))
        result.unfit = result.unfit or copies.unfit
    elif isinstance(copies, ViewsAllowed):
        result.leaf_updates = list(dict.fromkeys(copies.replaced))


def _function_leaves(program: Program, out: Any, watch: LeafWatch, first: int):
    """The leaves the harness differentiates for, each under a key that names the same
    tensor in every version: where it is reachable from (``global:model.weight``,
    ``return[0]``), else its rank among the leaves the call first used (``leaf#3``: graph
    order would change with ``h = b + h``). They are the leaves this call first used and the
    earlier calls' leaves the outputs' graphs reach (one kept in a closure). A leaf no torch
    call of the program used is the harness's own (a reference's private copy), never keyed."""
    named = {id(t): (key, t) for key, t in _reachable_tensors(program, out).items()
             if t.is_leaf and t.requires_grad}
    rank = {id(t): i for i, t in enumerate(watch.leaves)}
    keyed, taken = [], set()
    reached = graph_leaves([t for t in iter_tensors(out) if t.requires_grad])
    for t in [*watch.leaves[first:], *reached]:
        if id(t) in named or id(t) in taken or id(t) not in rank:
            continue
        taken.add(id(t))
        i = rank[id(t)]
        keyed.append((f"leaf#{i - first}" if i >= first else f"earlier leaf#{i}", t))
    return keyed + list(named.values())


def _reachable_tensors(program: Program, out: Any) -> Dict[str, torch.Tensor]:
    found: Dict[str, torch.Tensor] = {}
    seen: set = set()
    target = program.obj
    for name, value in vars(program.module).items():
        if name.startswith("__") or value is target or isinstance(value, (types.ModuleType, types.FunctionType, type)):
            continue
        _walk(value, f"global:{name}", found, seen, 0)
    _walk(out, "return", found, seen, 0)
    return found


def _walk(obj: Any, path: str, found: Dict[str, torch.Tensor], seen: set, depth: int) -> None:
    if depth > 5 or id(obj) in seen:
        return
    if isinstance(obj, torch.Tensor):
        seen.add(id(obj))
        found[path] = obj
        return
    if isinstance(obj, (str, bytes, int, float, complex, bool, type(None), types.ModuleType, type)) or callable(obj) and not isinstance(obj, torch.nn.Module):
        return
    seen.add(id(obj))
    if isinstance(obj, torch.nn.Module):
        for key, value in module_state(obj).items():
            _walk(value, f"{path}.{key}", found, seen, depth + 1)
        return
    if isinstance(obj, torch.optim.Optimizer):
        params = [p for group in obj.param_groups for p in group["params"]]
        for i, p in enumerate(params):
            for key, value in obj.state.get(p, {}).items():
                _walk(value, f"{path}.state[{i}].{key}", found, seen, depth + 1)
        return
    if isinstance(obj, dict):
        items = [(repr(k), v) for k, v in obj.items()]
        for key, value in items:
            _walk(value, f"{path}[{key}]", found, seen, depth + 1)
        return
    if isinstance(obj, (list, tuple, set, frozenset)):
        for i, value in enumerate(obj if not isinstance(obj, (set, frozenset)) else []):
            _walk(value, f"{path}[{i}]", found, seen, depth + 1)
        return
    fields = getattr(obj, "__dict__", None)
    if isinstance(fields, dict):
        for key, value in fields.items():
            if not key.startswith("__"):
                _walk(value, f"{path}.{key}", found, seen, depth + 1)


_PLAIN_STATE = (int, float, bool, str, complex)


def _plain_attributes(model: torch.nn.Module) -> Dict[str, Any]:
    """Numbers and strings set on the user's modules (``self.calls += 1``): state too. A
    library module's (``nn.ReLU.inplace``) are its configuration, not state."""
    found = {}
    for prefix, sub in model.named_modules():
        if type(sub).__module__.startswith("torch."):
            continue
        for name, value in vars(sub).items():
            if isinstance(value, _PLAIN_STATE) and not name.startswith("_") and name != "training":
                found[f"{prefix}.{name}" if prefix else name] = value
    return found


def _reachable_state(program: Program, out: Any, watch: LeafWatch):
    """(the final state, its tensors by key): every tensor reachable from the module's
    globals and from the return value, with their ``.grad``; and every leaf the run used that
    no name reaches (``leaf[3]``: the parameters of a model built inside the function, after
    its optimizer's steps), with its ``.grad``."""
    state: Dict[str, Any] = {}
    tensors: Dict[str, torch.Tensor] = {}
    for name, value in vars(program.module).items():
        if isinstance(value, _PLAIN_STATE) and not name.startswith("__"):
            state[f"global:{name}"] = value  # a counter kept in a global
    reachable = _reachable_tensors(program, out)
    named = {id(t) for t in reachable.values()}
    unnamed = {f"leaf[{i}]": t for i, t in enumerate(watch.leaves) if id(t) not in named}
    moved = {f"leaf[{i}]" for i in watch.changed()}
    for key, t in [*reachable.items(), *unnamed.items()]:
        if not key.startswith("return") and (key in moved or not key.startswith("leaf[")):
            state[key] = t  # a returned tensor is an output already; a leaf's value where the run changed it
            tensors[key] = t
        grad = t.grad if (t.is_leaf or t.retains_grad) else None  # a non-leaf's .grad warns
        if grad is not None:
            state[f"{key}.grad"] = grad
    return state, tensors


# ---------------------------------------------------------------- shared
def _backward(result: SideResult, label: str, out: Any, keyed,
              own_backward: bool = False) -> Tuple[Dict[str, Optional[torch.Tensor]], Tuple[int, ...]]:
    """The harness's own backward, always: the weighted loss of the outputs, to ``keyed``;
    and the outputs whose graph an earlier backward had freed (the program's own ``loss.backward()``,
    or a previous call's). Where one had, each output's own backward runs: the others' graphs
    still give gradients, and the freed ones are named, not taken as "no gradient". After the
    program's own backward (``own_backward``), a graph it kept (``retain_graph=True``) and then
    stepped the parameters of fails the harness's second backward with an in-place error that
    ``python`` never meets: that output counts as freed too."""
    if not keyed:
        return {}, ()
    # A leaf the program stopped tracking (``p.requires_grad_(False)`` on a frozen network it
    # used before) has no gradient (None): autograd.grad refuses it, python never asks. (Read
    # with torch functions off: a mode of the side would take the harness's look for a read.)
    with torch._C.DisableTorchFunction():
        tracked = [(key, t) for key, t in keyed if t.requires_grad]
    grads, freed = _backward_tracked(result, label, out, tracked, own_backward) if tracked else ({}, ())
    if tracked and not grads:  # every graph freed: nothing taken, as before
        return grads, freed
    return {key: grads.get(key) for key, _ in keyed}, freed


def _backward_tracked(result: SideResult, label: str, out: Any, keyed,
                      own_backward: bool) -> Tuple[Dict[str, Optional[torch.Tensor]], Tuple[int, ...]]:
    tensors = [t for _, t in keyed]
    try:
        terms = weighted_terms(out)
        if not terms:  # no output requires grad: no gradient reaches any of them
            return {key: None for key, _ in keyed}, ()
        found = torch.autograd.grad(sum(t for _, t in terms), tensors, allow_unused=True)
        freed: Tuple[int, ...] = ()
    except BaseException as exc:  # noqa: BLE001
        if not _freed_graph(exc, own_backward):
            _fail(result, label, exc)
        found, freed = _each_output(result, label, terms, tensors, own_backward)
        if found is None:
            return {}, freed
    return {key: (g.detach().cpu().clone() if g is not None else None) for (key, _), g in zip(keyed, found)}, freed


def _freed_graph(exc: BaseException, own_backward: bool = False) -> bool:
    text = str(exc)
    return "backward through the graph a second time" in text or (
        own_backward and inplace_error_kind(type(exc).__name__, text) == "saved")


def _each_output(result: SideResult, label: str, terms, tensors, own_backward: bool = False):
    """(the summed gradients of the outputs whose graph is intact, or None if none is; the
    positions of those whose graph was freed)."""
    total: List[Optional[torch.Tensor]] = [None] * len(tensors)
    freed, intact = [], 0
    for i, term in terms:
        try:
            found = torch.autograd.grad(term, tensors, allow_unused=True, retain_graph=True)
        except BaseException as exc:  # noqa: BLE001
            if not _freed_graph(exc, own_backward):
                _fail(result, label, exc)
            freed.append(i)
            continue
        intact += 1
        total = [g if t is None else (t if g is None else t + g) for t, g in zip(total, found)]
    which = ", ".join(f"output {i}" for i in freed)
    result.notes.append(f"{label}: the graph of {which} was already freed by an earlier backward (the program's "
                        "own, or a previous call's), or changed in place after the program's own backward; "
                        + ("the other outputs' gradients and " if intact else "")
                        + "every leaf's .grad are compared instead")
    return (total if intact else None), tuple(freed)


def _finish_watch(result: SideResult, watch: LeafWatch) -> None:
    result.leaf_updates = [f"{u.line} ({u.op})" for u in watch.updates]
    result.unfit = watch.unfit


def _load_setup(path: Optional[str]):
    if not path or not os.path.exists(path):
        return None
    try:
        return torch.load(path, weights_only=False)
    except Exception:
        return None


def _save_setup(path: Optional[str], setup: dict, result: SideResult) -> None:
    if not path:
        return
    try:
        torch.save(setup, path)
    except Exception as exc:  # inputs the tool cannot pickle: each side makes its own
        result.notes.append(f"inputs not shared between versions ({type(exc).__name__}); each made its own")


def _clock(device: str) -> float:
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter()


def _peak(device: str) -> Optional[int]:
    if not device.startswith("cuda"):
        return None
    return int(torch.cuda.max_memory_allocated())


def reset_peak(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
