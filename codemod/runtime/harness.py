"""What verify, locate and repair share: targets, loading user code, inputs, the loss.

Also the small in-process runner (:func:`run`) the fixture tests use. The runtime half of the
tool (it imports torch); the static passes never import it.

Targets, pytest-style:

- ``file.py::fn``: a zero-argument callable that runs forward (and maybe backward) and returns
  its results (tensors, or any structure of them and of plain values).
- ``file.py::Model``: an ``nn.Module`` subclass. Its constructor keywords come from
  ``init_kwargs`` (CLI ``--init '{"dim": 4}'``) or the file's ``example_init()``; its forward
  arguments from ``input_shapes`` (CLI ``--input-shape 2,4``, random normal tensors) or the
  file's ``example_inputs()`` (a tensor, a tuple of arguments, or a dict of keywords).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import linecache
import pathlib
import random
import sys
import types
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

from codemod.encoding import decode_source
from codemod.engine.fileio import Snapshot, read_snapshot

from codemod.runtime.compare import iter_tensors
from codemod.runtime.ctx_attributes import snapshot_ctx_attributes

# The name a loaded target gets in ``sys.modules`` (so pickling, dataclasses and TorchScript
# can find its globals). Each run is a fresh process, so one name serves every version.
TARGET_MODULE = "__inplacefix_target__"


class HarnessError(Exception):
    """The target could not be loaded or run at all (exit code 2)."""


@dataclasses.dataclass(frozen=True)
class Target:
    """``path/to/file.py::Name`` and how to call it."""

    path: pathlib.Path
    name: str
    init_kwargs: Optional[Dict[str, Any]] = None
    input_shapes: Optional[Tuple[Tuple[int, ...], ...]] = None
    inputs_require_grad: bool = False  # harness-made inputs require grad only when asked

    @property
    def spec(self) -> str:
        return f"{self.path}::{self.name}"


def split_target(target: str) -> Tuple[pathlib.Path, str]:
    path, sep, name = target.partition("::")
    if not sep or not name:
        raise HarnessError(f"target must look like path/to/file.py::Name, got {target!r}")
    return pathlib.Path(path), name


def parse_target(target: str, init_kwargs=None, input_shapes=None, inputs_require_grad: bool = False) -> Target:
    path, name = split_target(target)
    shapes = tuple(tuple(int(d) for d in s) for s in input_shapes) if input_shapes else None
    return Target(path, name, dict(init_kwargs) if init_kwargs is not None else None, shapes, inputs_require_grad)


def read_target(path: pathlib.Path) -> Snapshot:
    """The target file as read (a regular file only: a FIFO would block); HarnessError if not."""
    try:
        return read_snapshot(path)
    except OSError as exc:
        raise HarnessError(f"cannot read {path}: {exc.strerror or exc}") from exc


def target_text(path: pathlib.Path, data: bytes) -> str:
    """A file's text by its PEP 263 encoding (latin-1 files too), line endings kept: a write
    changes only the repaired lines."""
    try:
        return decode_source(data)
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        raise HarnessError(f"cannot decode {path}: {exc}") from exc


def read_source(path: pathlib.Path) -> str:
    """``path``'s text, as :func:`target_text` decodes it."""
    return target_text(path, read_target(path).data)


def seed_everything(seed: int = 0) -> None:
    """The same draws for every version: torch, Python's random, and numpy when loaded."""
    torch.manual_seed(seed)
    random.seed(seed)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed)


def load_module(source: str, filename: str, name: str = TARGET_MODULE, keep: bool = False) -> types.ModuleType:
    """Execute ``source`` as a fresh module whose tracebacks, ``inspect`` and ``linecache``
    (hence TorchScript) see ``source`` itself under ``filename``, not the file on disk."""
    lines = source.splitlines(keepends=True)
    linecache.cache[filename] = (len(source), None, lines, filename)  # mtime None: never reloaded
    spec = importlib.util.spec_from_loader(name, loader=None, origin=filename)
    module = importlib.util.module_from_spec(spec)
    module.__file__ = filename
    sys.modules[name] = module
    try:
        exec(compile(source, filename, "exec"), module.__dict__)
    finally:
        if not keep:
            sys.modules.pop(name, None)
    return module


def flatten(obj: Any) -> List[torch.Tensor]:
    """The tensors in a tensor, a (nested) tuple/list, or a dict (by sorted key)."""
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, dict):
        return [t for k in sorted(obj, key=str) for t in flatten(obj[k])]
    if isinstance(obj, (list, tuple)):
        return [t for item in obj for t in flatten(item)]
    return []


def graph_leaves(outputs: List[torch.Tensor]) -> List[torch.Tensor]:
    """Leaf tensors that require grad and feed ``outputs``, in a stable order."""
    leaves, seen, stack = [], set(), [o.grad_fn for o in reversed(outputs) if o.grad_fn is not None]
    visited = set()
    for o in outputs:
        if o.is_leaf and o.requires_grad and id(o) not in seen:
            seen.add(id(o))
            leaves.append(o)
    while stack:
        fn = stack.pop()
        if fn is None or fn in visited:
            continue
        visited.add(fn)
        variable = getattr(fn, "variable", None)
        if variable is not None and id(variable) not in seen:
            seen.add(id(variable))
            leaves.append(variable)
        stack.extend(f for f, _ in reversed(fn.next_functions) if f is not None)
    return leaves


def is_inplace_error(exc: BaseException) -> bool:
    """For reporting only: the wording changes between releases, so only stable words are read."""
    text = str(exc)
    return isinstance(exc, RuntimeError) and (
        "inplace operation" in text or "in-place operation" in text or "modified inplace" in text
        or "is being modified inplace" in text
    )


def inplace_error_kind(type_name: str, text: str) -> Optional[str]:
    """"leaf", "view" or "saved" for the three in-place errors autograd raises; None otherwise."""
    if type_name not in ("RuntimeError", "LocatedInplaceError"):
        return None
    if "leaf Variable that requires grad" in text:
        return "leaf"
    if ("is a view" in text or "created in no_grad mode" in text) and ("inplace" in text or "in-place" in text):
        return "view"
    if "inplace operation" in text or "in-place operation" in text:
        return "saved"
    return None


@dataclasses.dataclass
class RunResult:
    ok: bool
    error: Optional[BaseException] = None
    outputs: List[torch.Tensor] = dataclasses.field(default_factory=list)
    grads: List[Optional[torch.Tensor]] = dataclasses.field(default_factory=list)

    @property
    def inplace_error(self) -> bool:
        return self.error is not None and is_inplace_error(self.error)


@contextlib.contextmanager
def snapshot_saved_tensors():
    """The oracle: every tensor autograd saves is copied at save time, so later in-place
    writes cannot reach it and backward sees the values the forward really used."""
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t), \
            snapshot_ctx_attributes():  # and what a custom Function keeps on its ctx (runtime.ctx_attributes)
        yield


def sum_of_outputs(outputs: List[torch.Tensor]) -> Optional[torch.Tensor]:
    """The plain loss: the sum of every output that requires grad (None if there is none)."""
    differentiable = [o for o in outputs if o.requires_grad]
    return sum(o.double().sum() for o in differentiable) if differentiable else None


def run(fn: Callable[[], Any], seed: int = 0, snapshot: bool = False,
        loss: Callable[[List[torch.Tensor]], Optional[torch.Tensor]] = sum_of_outputs) -> RunResult:
    """Seed, call ``fn``, then backpropagate ``loss`` of its outputs to every leaf.

    If ``fn`` ran backward itself (its leaves have ``.grad``), those gradients are taken.
    """
    torch.manual_seed(seed)
    ctx = snapshot_saved_tensors() if snapshot else contextlib.nullcontext()
    try:
        with ctx:
            outputs = flatten(fn())
            leaves = graph_leaves(outputs)
            if leaves and any(leaf.grad is not None for leaf in leaves):
                grads = [leaf.grad for leaf in leaves]
            else:
                total = loss(outputs)
                grads = []
                if total is not None and leaves:
                    grads = list(torch.autograd.grad(total, leaves, allow_unused=True))
    except Exception as exc:  # the user's program failed: that is a result, not our error
        return RunResult(False, exc)
    return RunResult(True, None, [o.detach() for o in outputs], [g if g is None else g.detach() for g in grads])


def max_difference(a: List[Optional[torch.Tensor]], b: List[Optional[torch.Tensor]]) -> float:
    """Largest absolute difference between matching tensors; inf if they do not match up."""
    if len(a) != len(b):
        return float("inf")
    worst = 0.0
    for x, y in zip(a, b):
        if x is None or y is None:
            if x is not y:
                return float("inf")
            continue
        if x.shape != y.shape or x.dtype != y.dtype:
            return float("inf")
        if x.numel():
            worst = max(worst, (x.double() - y.double()).abs().max().item())
    return worst


# ---------------------------------------------------------------- programs, inputs, the loss
class Program:
    """One loaded source (original or rewritten) and its target, in the current process."""

    def __init__(self, source: str, path: pathlib.Path, name: str) -> None:
        self.module = load_module(source, str(path), keep=True)
        if not hasattr(self.module, name):
            raise HarnessError(f"{path} has no {name!r}")
        self.obj = getattr(self.module, name)
        self.is_module = isinstance(self.obj, type) and issubclass(self.obj, torch.nn.Module)
        if not self.is_module and not callable(self.obj):
            raise HarnessError(f"{name!r} in {path} is neither a callable nor an nn.Module subclass")


def init_kwargs_for(program: Program, target: Target) -> dict:
    if target.init_kwargs is not None:
        return dict(target.init_kwargs)
    if hasattr(program.module, "example_init"):
        return dict(program.module.example_init())
    return {}


def make_inputs(program: Program, target: Target) -> Tuple[tuple, dict]:
    """(args, kwargs) for forward, made on the CPU with a fixed seed. Tensors the harness draws
    (``--input-shape``) require grad only with ``inputs_require_grad``; the file's
    ``example_inputs()`` keep the flags it set (and get it too when asked)."""
    torch.manual_seed(1234)
    with torch.device("cpu"):
        if target.input_shapes:
            raw: Any = tuple(torch.randn(*shape) for shape in target.input_shapes)
        elif hasattr(program.module, "example_inputs"):
            raw = program.module.example_inputs()
        else:
            raise HarnessError("a module target needs example_inputs() in its file or --input-shape")
    if isinstance(raw, dict):
        args, kwargs = (), dict(raw)
    else:
        args, kwargs = ((raw,) if isinstance(raw, torch.Tensor) else tuple(raw)), {}

    def prep(t):
        if isinstance(t, torch.Tensor):
            wants = t.requires_grad or (target.inputs_require_grad and (t.is_floating_point() or t.is_complex()))
            return t.detach().clone().requires_grad_(wants)
        return t

    return tuple(prep(a) for a in args), {k: prep(v) for k, v in kwargs.items()}


def fresh_inputs(args: tuple, kwargs: dict, device: str, dtype: Optional[torch.dtype]) -> Tuple[tuple, dict]:
    """A copy of the inputs for one call, on ``device`` (and in ``dtype``), flags kept."""

    def prep(t):
        if not isinstance(t, torch.Tensor):
            return t
        wants = t.requires_grad
        t = t.detach().to(device)
        if dtype is not None and t.is_floating_point():
            t = t.to(dtype)
        return t.clone().requires_grad_(wants)

    return tuple(prep(a) for a in args), {k: prep(v) for k, v in kwargs.items()}


def build_model(program: Program, init: dict, state: Optional[dict], device: str, dtype: Optional[torch.dtype]):
    """The model, seeded and built on the CPU, with ``state`` loaded if given: the same weights
    for every version and every device."""
    torch.manual_seed(0)
    with torch.device("cpu"):
        model = program.obj(**init)
    if state is not None:
        model.load_state_dict(state)
    model = model.to(device)
    return model.to(dtype) if dtype is not None else model


def cotangents(outputs: List[torch.Tensor]) -> List[torch.Tensor]:
    """Fixed random weights for each output, so that errors cannot cancel in a plain sum."""
    gen = torch.Generator().manual_seed(99)
    return [torch.randn(o.shape, generator=gen, dtype=torch.float64, device="cpu") for o in outputs]


def weighted_terms(result: Any, everything: bool = False) -> List[Tuple[int, torch.Tensor]]:
    """The harness's loss, one term per output tensor that requires grad (every floating one
    with ``everything``): (the output's position among the floating outputs, its term). Each
    output is weighed by fixed random numbers (complex ones by their real and imaginary
    parts); a sparse, MKL-DNN or nested output by those of its dense values."""
    outputs = [_strided(t) for t in iter_tensors(result) if t.is_floating_point() or t.is_complex()]
    terms = []
    for i, (o, w) in enumerate(zip(outputs, cotangents(outputs))):
        if not (o.requires_grad or everything):
            continue
        w = w.to(o.device)
        if o.is_complex():
            r = torch.view_as_real(o).double()
            terms.append((i, (r[..., 0] * w).sum() + (r[..., 1] * (0.5 * w + 0.25)).sum()))
        else:
            terms.append((i, (o.double() * w).sum()))
    return terms


def weighted_loss(result: Any, everything: bool = False) -> Optional[torch.Tensor]:
    """The sum of :func:`weighted_terms`; None if there is none."""
    terms = [t for _, t in weighted_terms(result, everything)]
    return sum(terms) if terms else None


def _strided(t: torch.Tensor) -> torch.Tensor:
    """An ordinary dense tensor with ``t``'s values, differentiably: what the weights multiply."""
    if t.is_nested:
        return torch.cat([part.reshape(-1) for part in t.unbind()])
    if t.layout != torch.strided or t.is_mkldnn:
        return t.to_dense()
    return t
