"""Running code with real torch: load a source as a module, run it forward and backward, and
compute the gradient a broken program meant (the oracle).

This is the runtime half of the tool (it imports torch); the static passes never import it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import sys
import types
from typing import Any, Callable, List, Optional

import torch


def load_module(source: str, filename: str, name: str) -> types.ModuleType:
    """Execute ``source`` as a fresh module whose tracebacks name ``filename``."""
    spec = importlib.util.spec_from_loader(name, loader=None, origin=filename)
    module = importlib.util.module_from_spec(spec)
    module.__file__ = filename
    sys.modules[name] = module
    try:
        exec(compile(source, filename, "exec"), module.__dict__)
    finally:
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
    return isinstance(exc, RuntimeError) and ("inplace operation" in text or "in-place operation" in text)


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
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
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
