"""What a run is compared against when the original cannot run: the references.

- ``saved`` errors (a tensor saved for backward, modified in place): the **snapshot oracle**.
  Every tensor autograd saves is copied at save time, so backward sees the values the forward
  really used: the gradient of what the program computed. Cross-checked with
  ``torch.func.functionalize`` for module targets.
- ``leaf`` errors (an in-place op on a leaf that requires grad): the **no-grad meaning**. The
  offending in-place updates are applied outside autograd, as under ``torch.no_grad()``: the
  meaning of weight surgery, init, manual SGD, EMA updates and state resets. It does not fit
  when the leaf was already read by the computation being differentiated (used since the last
  backward): then the program's meaning is not known and the verdict is ``unproven``.
- ``view`` errors (a view PyTorch refuses to modify in place): **writes into copies**
  (``view_copies``): every refused view is replaced by a copy of itself where it is made, the
  meaning of IPF006's fix. It does not fit where the tensor viewed is read after a write into
  the copy (in place it would have seen it): then the verdict is ``unproven``.

The same hooks count what a run saves for backward (the cost columns).
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import linecache
import sys
from typing import Dict, List, Optional

import torch
from torch.overrides import TorchFunctionMode


class Mode(str, enum.Enum):
    PLAIN = "plain"  # the program as written
    SNAPSHOT = "snapshot"  # the snapshot oracle
    NO_GRAD_LEAVES = "no-grad-leaves"  # the no-grad meaning of in-place updates of leaves
    VIEW_COPIES = "view-copies"  # refused views replaced by copies (``view_copies``)


REFERENCE_NAMES = {
    Mode.SNAPSHOT: "oracle",
    Mode.NO_GRAD_LEAVES: "no-grad meaning",
    Mode.VIEW_COPIES: "writes into copies",
}


class SavedTensors:
    """Saved-tensor hooks that count the bytes autograd keeps for backward and, for the
    oracle, keep a copy instead of the tensor. Plain runs keep the tensor and re-check its
    version at unpack (autograd skips its own check while any such hooks are installed)."""

    def __init__(self, snapshot: bool) -> None:
        self.snapshot = snapshot
        self.bytes = 0
        self._seen: set = set()

    def _pack(self, t: torch.Tensor):
        key = (t.data_ptr(), t.dtype, tuple(t.shape), tuple(t.stride()), t.device)
        if key not in self._seen:
            self._seen.add(key)
            self.bytes += t.numel() * t.element_size()
        if self.snapshot:
            return t.detach().clone()
        maker = t.grad_fn.name() if t.grad_fn is not None else ("a leaf" if t.requires_grad else "no graph")
        try:
            return (t.detach(), t._version, maker)
        except RuntimeError:  # inference tensors have no version counter
            return (t, None, maker)

    def _unpack(self, packed):
        if self.snapshot:
            return packed
        tensor, version, maker = packed
        if version is not None and tensor._version != version:
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: a tensor of shape {tuple(tensor.shape)} (made by {maker}) was saved "
                f"at version {version} and is at version {tensor._version}"
            )
        return tensor

    def hooks(self):
        return torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)


_INPLACE_DUNDERS = {"__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__",
                    "__imod__", "__ipow__", "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__",
                    "__imatmul__"}


def is_inplace_call(name: str, kwargs: dict) -> bool:
    return (name in _INPLACE_DUNDERS or kwargs.get("inplace") is True
            or (name.endswith("_") and not name.startswith("_")))


@dataclasses.dataclass
class LeafUpdate:
    line: str  # "model.py:12"
    op: str


class LeafWatch(TorchFunctionMode):
    """Sees every torch call of a run:

    - keeps the leaves that require grad in the order they first appear (a stable key for a
      function target's leaves: ``leaf#0`` is the first one created, whatever the graph's
      shape; ``h = b + h`` and ``h += b`` name the same leaves);
    - with ``no_grad_leaves``, applies in-place updates of such leaves outside autograd, and
      says where the no-grad meaning does not fit.
    """

    def __init__(self, no_grad_leaves: bool = False) -> None:
        super().__init__()
        self.no_grad_leaves = no_grad_leaves
        self.leaves: List[torch.Tensor] = []
        self._ids: set = set()
        self._read: set = set()  # leaves read by a recorded op since the last backward
        self.updates: List[LeafUpdate] = []
        self.unfit: Optional[str] = None

    def note(self, t) -> None:
        if isinstance(t, torch.Tensor) and t.is_leaf and t.requires_grad and id(t) not in self._ids:
            self._ids.add(id(t))
            self.leaves.append(t)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        tensors = [a for a in _flat(args) if isinstance(a, torch.Tensor)]
        tensors += [v for v in _flat(kwargs.values()) if isinstance(v, torch.Tensor)]
        for t in tensors:
            self.note(t)
        target = args[0] if args else None
        if (self.no_grad_leaves and isinstance(target, torch.Tensor) and target.is_leaf
                and target.requires_grad and torch.is_grad_enabled() and is_inplace_call(name, kwargs)):
            where = _user_line()
            if id(target) in self._read and self.unfit is None:
                self.unfit = (f"{where}: `{name}` updates a leaf that the computation being "
                              "differentiated already read; its meaning is not known")
            self.updates.append(LeafUpdate(where, name))
            with torch.no_grad():
                return func(*args, **kwargs)
        result = func(*args, **kwargs)
        if name in ("backward", "grad"):
            self._read.clear()
        elif torch.is_grad_enabled():
            if any(isinstance(r, torch.Tensor) and r.requires_grad for r in _flat([result])):
                self._read.update(id(t) for t in tensors if t.is_leaf and t.requires_grad)
        for r in _flat([result]):
            self.note(r)
        return result


def _flat(items):
    for item in items:
        if isinstance(item, (list, tuple)):
            yield from _flat(item)
        elif isinstance(item, dict):
            yield from _flat(list(item.values()))
        else:
            yield item


def _user_line() -> str:
    """``file:line`` of the innermost frame outside torch and this tool."""
    torch_dir = torch.__file__.rsplit("/", 1)[0]
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith(torch_dir) and "/codemod/runtime/" not in name and not name.startswith("<frozen"):
            text = linecache.getline(name, frame.f_lineno).strip()
            return f"{name.rsplit('/', 1)[-1]}:{frame.f_lineno} `{text}`"
        frame = frame.f_back
    return "?"


@contextlib.contextmanager
def deterministic(device: str):
    previous = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        with torch.device(device):
            yield
    finally:
        torch.use_deterministic_algorithms(previous)


def functionalize_grads(model, args, kwargs, names: List[str], loss) -> Optional[Dict[str, torch.Tensor]]:
    """Gradients of a module's forward values via ``torch.func.functionalize``: a second
    oracle, independent of saved-tensor hooks. None where functionalize cannot run it."""
    from torch.func import functional_call, functionalize, grad

    params = {n: p.detach() for n, p in model.named_parameters() if p.requires_grad}
    tensor_args = [a.detach().clone() if isinstance(a, torch.Tensor) else a for a in args]

    def f(params, *inputs):  # grad() hides requires_grad from the outputs: weigh them all
        out = functional_call(model, params, tuple(inputs), dict(kwargs))
        return loss(out, everything=True)

    argnums = (0,) + tuple(i + 1 for i, a in enumerate(tensor_args)
                           if isinstance(a, torch.Tensor) and a.requires_grad)
    torch.manual_seed(0)
    try:
        found = grad(functionalize(f), argnums=argnums)(params, *tensor_args)
    except Exception:
        return None
    out = {f"param:{n}": g for n, g in found[0].items()}
    for i, g in zip(argnums[1:], found[1:]):
        out[f"input:{i - 1}"] = g
    return {n: out[n] for n in names if n in out}
