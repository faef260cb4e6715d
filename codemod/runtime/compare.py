"""What a run computed, as a plain tree, and how two such trees are compared.

A run happens in another process, and the user's own classes (a dataclass, a ``ModelOutput``)
cannot be unpickled by the tool. :func:`encode` turns any result into a tree of the small
types below (tensors stay tensors, on the CPU); :func:`compare` walks two trees together.

The rules are the ones a program's meaning depends on: sequences by position, mappings by key
(a renamed key is a difference), dataclasses, named tuples and plain objects by field; numbers,
strings and other plain leaves with ``==``; integer and bool tensors exactly, floating and
complex ones (complex as complex) with the tolerance of *their own* dtype, entry by entry
(:func:`close_entrywise`): relative to the entry's own magnitude, and beyond it only by what the
reference's measured rounding noise at that entry explains; a dtype or shape change is a
difference of its own, never a tolerance question.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Dict, List, Optional, Tuple, Union

import torch

# (rtol, atol) per dtype, for two runs on the same device.
TOLERANCES: Dict[torch.dtype, Tuple[float, float]] = {
    torch.float64: (1e-7, 1e-9),
    torch.float32: (1e-5, 1e-6),
    torch.float16: (1e-2, 1e-3),
    torch.bfloat16: (2e-2, 1e-2),
    torch.complex128: (1e-7, 1e-9),
    torch.complex64: (1e-5, 1e-6),
}
# The same, for CPU against CUDA (other kernels, other summation orders).
CROSS_DEVICE_TOLERANCES: Dict[torch.dtype, Tuple[float, float]] = {
    torch.float64: (1e-6, 1e-8),
    torch.float32: (1e-3, 1e-4),
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (5e-2, 5e-2),
    torch.complex128: (1e-6, 1e-8),
    torch.complex64: (1e-3, 1e-4),
}


@dataclasses.dataclass
class TensorValue:
    value: torch.Tensor  # detached, on the CPU
    device: str
    requires_grad: bool = False


@dataclasses.dataclass
class Seq:
    kind: str  # "list", "tuple"
    items: List["Node"]


@dataclasses.dataclass
class Mapping:
    kind: str  # "dict", "OrderedDict", a ModelOutput class name
    items: Dict[str, "Node"]


@dataclasses.dataclass
class Obj:
    kind: str  # the class name
    fields: Dict[str, "Node"]


@dataclasses.dataclass
class Plain:
    value: Any  # int, float, complex, bool, str, bytes, None, or a repr for torch.dtype/Size/device
    kind: str


@dataclasses.dataclass
class Opaque:
    kind: str  # an object with nothing comparable inside (a function, a file): only its type counts


Node = Union[TensorValue, Seq, Mapping, Obj, Plain, Opaque]

_PLAIN = (int, float, complex, bool, str, bytes, type(None))


def encode(obj: Any, depth: int = 0) -> Node:
    """``obj`` as a tree of picklable nodes (tensors detached and moved to the CPU)."""
    kind = type(obj).__name__
    if isinstance(obj, torch.Tensor):
        if obj.is_nested:  # compared part by part
            return Seq("nested tensor", [encode(part, depth + 1) for part in obj.detach().unbind()])
        value = obj.detach()
        if value.is_mkldnn:
            value = value.to_dense()
        return TensorValue(value.cpu().clone(), str(obj.device), bool(obj.requires_grad))
    if isinstance(obj, _PLAIN):
        return Plain(obj, kind)
    if isinstance(obj, (torch.dtype, torch.device, torch.Size)):
        return Plain(repr(obj), kind)
    if depth > 6:
        return Opaque(kind)
    if isinstance(obj, torch.nn.Module):
        return Obj(kind, {k: encode(v, depth + 1) for k, v in module_state(obj).items()})
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return Obj(kind, {f: encode(getattr(obj, f), depth + 1) for f in obj._fields})
    if isinstance(obj, (list, tuple)):
        return Seq(kind, [encode(v, depth + 1) for v in obj])
    if isinstance(obj, dict):
        return Mapping(kind, {(k if isinstance(k, str) else repr(k)): encode(v, depth + 1) for k, v in obj.items()})
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return Obj(kind, {f.name: encode(getattr(obj, f.name), depth + 1) for f in dataclasses.fields(obj)})
    if isinstance(obj, (set, frozenset)):
        try:
            return Seq(kind, [encode(v, depth + 1) for v in sorted(obj)])
        except TypeError:
            return Opaque(kind)
    fields = getattr(obj, "__dict__", None)
    if isinstance(fields, dict) and not callable(obj):
        return Obj(kind, {k: encode(v, depth + 1) for k, v in fields.items() if not k.startswith("__")})
    return Opaque(kind)


def iter_tensors(obj: Any, depth: int = 0):
    """The tensors in ``obj``, in the order :func:`encode` visits them (the harness weighs
    each output tensor by its position in this order)."""
    if isinstance(obj, torch.Tensor):
        yield obj
        return
    if isinstance(obj, _PLAIN) or depth > 6:
        return
    if isinstance(obj, torch.nn.Module):
        return  # a returned module is state, not an output to differentiate
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        items = [getattr(obj, f) for f in obj._fields]
    elif isinstance(obj, (list, tuple)):
        items = list(obj)
    elif isinstance(obj, dict):
        items = list(obj.values())
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        items = [getattr(obj, f.name) for f in dataclasses.fields(obj)]
    else:
        fields = getattr(obj, "__dict__", None)
        items = [v for k, v in fields.items() if not k.startswith("__")] if isinstance(fields, dict) and not callable(obj) else []
    for item in items:
        yield from iter_tensors(item, depth + 1)


def module_state(module: torch.nn.Module) -> Dict[str, torch.Tensor]:
    """Parameters and buffers (``state_dict``) and tensors set as plain attributes on any
    submodule (``self.state = ...``), by dotted name."""
    state = dict(module.state_dict(keep_vars=True))
    for prefix, sub in module.named_modules():
        for name, value in vars(sub).items():
            if isinstance(value, torch.Tensor) and not name.startswith("_"):
                state.setdefault(f"{prefix}.{name}" if prefix else name, value)
    return state


@dataclasses.dataclass
class Difference:
    where: str  # "output[0]", "state:fc.weight", "grad:param:fc.bias"
    what: str  # "values differ (max abs 0.031)", "dtype float16 -> float32", "missing"

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"


@dataclasses.dataclass
class Tally:
    """What a comparison looked at."""

    tensors: int = 0  # tensors compared
    values: int = 0  # non-tensor leaves compared
    max_abs: Optional[float] = None
    max_rel: Optional[float] = None

    def add(self, other: "Tally") -> None:
        self.tensors += other.tensors
        self.values += other.values
        self.max_abs = _max(self.max_abs, other.max_abs)
        self.max_rel = _max(self.max_rel, other.max_rel)


def _max(a: Optional[float], b: Optional[float]) -> Optional[float]:
    if a is None:
        return b
    return a if b is None else max(a, b)


# How many times an entry's measured rounding noise (the reference against the rounding probes)
# a rewrite's rounding may reach there. The probes round every operation one way, so their
# errors add up where a rewrite's, rounded to nearest, mostly cancel: measured on reordered sums,
# Adam steps and variances (E[x^2] - E[x]^2 of values near 1000), a rewrite's difference was at
# most half the probes' at every entry. 4 leaves room, and no more.
NOISE_FACTOR = 4.0
VALUES_DIFFER = "values differ"  # how a difference beyond the tolerance begins (the others: NaN, dtype, shape...)


@dataclasses.dataclass
class Tolerance:
    """Explicit rtol/atol (``0`` honoured) or, where None, the default of each tensor's dtype.
    ``noise``: per compared tensor (by its place, the ``where`` of :func:`compare`), each entry's
    rounding noise measured by the probe; ``record``: where set, :func:`compare_tensors` records
    ``|a - b|`` per place into it instead (how the noise is measured)."""

    rtol: Optional[float] = None
    atol: Optional[float] = None
    table: Dict[torch.dtype, Tuple[float, float]] = dataclasses.field(default_factory=lambda: TOLERANCES)
    noise: Optional[Dict[str, torch.Tensor]] = None
    record: Optional[Dict[str, torch.Tensor]] = None

    def of(self, dtype: torch.dtype) -> Tuple[float, float]:
        rtol, atol = self.table.get(dtype, self.table[torch.float32])
        return (rtol if self.rtol is None else self.rtol, atol if self.atol is None else self.atol)


def compare(ref: Node, new: Node, where: str, tol: Tolerance, diffs: List[Difference]) -> Tally:
    """Walk two trees; append every difference to ``diffs``; return what was compared."""
    tally = Tally()
    if type(ref) is not type(new) or getattr(ref, "kind", None) != getattr(new, "kind", None):
        diffs.append(Difference(where, f"{_describe(ref)} -> {_describe(new)}"))
        return tally
    if isinstance(ref, TensorValue):
        return compare_tensors(ref.value, new.value, where, tol, diffs)
    if isinstance(ref, Plain):
        tally.values += 1
        if not _same_plain(ref.value, new.value):
            diffs.append(Difference(where, f"{ref.value!r} -> {new.value!r}"))
        return tally
    if isinstance(ref, Opaque):
        return tally
    if isinstance(ref, Seq):
        if len(ref.items) != len(new.items):
            diffs.append(Difference(where, f"length {len(ref.items)} -> {len(new.items)}"))
            return tally
        for i, (a, b) in enumerate(zip(ref.items, new.items)):
            tally.add(compare(a, b, f"{where}[{i}]", tol, diffs))
        return tally
    a_items = ref.items if isinstance(ref, Mapping) else ref.fields
    b_items = new.items if isinstance(new, Mapping) else new.fields
    if list(a_items) != list(b_items):
        missing = [k for k in a_items if k not in b_items]
        extra = [k for k in b_items if k not in a_items]
        what = ", ".join(filter(None, [missing and f"missing {', '.join(missing[:4])}",
                                      extra and f"new {', '.join(extra[:4])}"])) or "keys in another order"
        diffs.append(Difference(where, what))
    for key in a_items:
        if key in b_items:
            sep = "." if isinstance(ref, Obj) else ""
            label = f"{where}{sep}{key}" if isinstance(ref, Obj) else f"{where}[{key}]"
            tally.add(compare(a_items[key], b_items[key], label, tol, diffs))
    return tally


def compare_tensors(a: Optional[torch.Tensor], b: Optional[torch.Tensor], where: str, tol: Tolerance,
                    diffs: List[Difference]) -> Tally:
    tally = Tally()
    if a is None or b is None:
        if a is not None or b is not None:
            diffs.append(Difference(where, f"{_tensor_label(a)} -> {_tensor_label(b)}"))
        return tally
    tally.tensors += 1
    if a.dtype != b.dtype:
        diffs.append(Difference(where, f"dtype {_dtype(a.dtype)} -> {_dtype(b.dtype)}"))
        return tally
    if a.shape != b.shape:
        diffs.append(Difference(where, f"shape {tuple(a.shape)} -> {tuple(b.shape)}"))
        return tally
    a, b = a.detach().cpu(), b.detach().cpu()
    if a.layout != torch.strided or b.layout != torch.strided:
        a, b = a.to_dense(), b.to_dense()
    if not (a.is_floating_point() or a.is_complex()):
        same = torch.equal(a, b)
        tally.max_abs = 0.0 if same or not a.numel() else float((a.long() - b.long()).abs().max())
        if not same:
            diffs.append(Difference(where, f"{_dtype(a.dtype)} values differ (compared exactly)"))
        return tally
    wide = torch.complex128 if a.is_complex() else torch.float64
    x, y = a.to(wide), b.to(wide)
    if a.numel():
        delta = (x - y).abs()
        finite = torch.isfinite(delta)
        tally.max_abs = float(delta[finite].max()) if finite.any() else 0.0
        scale = float(x.abs()[torch.isfinite(x.abs())].max()) if torch.isfinite(x.abs()).any() else 0.0
        tally.max_rel = tally.max_abs / scale if scale else tally.max_abs
    else:
        tally.max_abs = tally.max_rel = 0.0
    if tol.record is not None:
        tol.record[where] = entry_noise(x, y)
    rtol, atol = tol.of(a.dtype)
    if not close_entrywise(x, y, rtol, atol, (tol.noise or {}).get(where)):
        nan_moved = not torch.equal(torch.isnan(x), torch.isnan(y))
        what = "NaN in other places" if nan_moved else f"{VALUES_DIFFER} (max abs {tally.max_abs:.3g}{_worst(x, y, rtol, atol, tol, where)})"
        diffs.append(Difference(where, what))
    return tally


def entry_noise(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``|x - y|`` per entry (real, float64), 0 where either is not finite."""
    delta = (x.to(torch.complex128 if x.is_complex() else torch.float64)
             - y.to(torch.complex128 if y.is_complex() else torch.float64)).abs()
    return torch.where(torch.isfinite(delta), delta, torch.zeros_like(delta))


def close_entrywise(x: torch.Tensor, y: torch.Tensor, rtol: float, atol: float,
                    noise: Optional[torch.Tensor] = None) -> bool:
    """``|x - y| <= atol + rtol * max(|x|, |y|) + NOISE_FACTOR * noise`` at every finite entry,
    ``noise`` that entry's rounding noise measured by the probe (none: 0); NaN and infinities in
    the same places (infinities of the same sign).

    Why each entry's own bound: a difference is rounding only where rounding can produce it *at
    that entry*. A bound at the tensor's scale (its largest entry) let a small value computed on
    its own, stacked beside a large noisy sum, change by ``rtol`` of the sum. Entries whose
    rounding really is far above their magnitude (a cancellation ``x - x'`` of large values,
    weights near zero after optimizer steps, measured up to 16 float32 eps of the tensor's
    largest value) show it in the probe, the reference run again with every operation rounded
    upward (:mod:`codemod.runtime.rounding`), and get their tolerance from their own noise, never
    from a neighbour's.
    """
    if not torch.equal(torch.isnan(x), torch.isnan(y)):
        return False
    infinite = torch.isinf(x) | torch.isinf(y)
    if not torch.equal(x[infinite], y[infinite]):
        return False
    finite = torch.isfinite(x) & torch.isfinite(y)
    if not finite.any():
        return True
    return worst_entry(x, y, rtol, atol, noise) is None


def worst_entry(x: torch.Tensor, y: torch.Tensor, rtol: float, atol: float,
                noise: Optional[torch.Tensor] = None) -> Optional[Tuple[int, Any, Any]]:
    """The finite entry furthest beyond its own bound (see :func:`close_entrywise`), as (flat
    index, before, after); None where every finite entry is within it."""
    finite = (torch.isfinite(x) & torch.isfinite(y)).reshape(-1)
    bound = atol + rtol * torch.maximum(x.abs(), y.abs())
    if noise is not None and noise.shape == x.shape:
        bound = bound + NOISE_FACTOR * noise
    excess = ((x - y).abs() - bound).reshape(-1)
    excess = torch.where(finite, excess, torch.full_like(excess, -1.0))
    if not excess.numel() or float(excess.max()) <= 0:
        return None
    index = int(excess.argmax())
    return index, x.reshape(-1)[index].item(), y.reshape(-1)[index].item()


def _worst(x: torch.Tensor, y: torch.Tensor, rtol: float, atol: float, tol: Tolerance, where: str) -> str:
    worst = worst_entry(x, y, rtol, atol, (tol.noise or {}).get(where))
    if worst is None:
        return ""
    index, before, after = worst
    return f"; beyond its own bound at entry {index}: {before:.6g} -> {after:.6g}"


def _same_plain(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def _dtype(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def _tensor_label(t: Optional[torch.Tensor]) -> str:
    return "None" if t is None else f"tensor {tuple(t.shape)} {_dtype(t.dtype)}"


def _describe(node: Node) -> str:
    if isinstance(node, TensorValue):
        return f"tensor {tuple(node.value.shape)} {_dtype(node.value.dtype)}"
    if isinstance(node, Plain):
        return f"{node.kind} {node.value!r}"
    return node.kind


def grad_flag_differences(ref: Node, new: Node, where: str) -> List[Difference]:
    """The tensors of two trees (of the same shape: :func:`compare` says where they are not)
    that require grad on one side only. An output that requires grad is one a caller can
    differentiate; a rewrite that detached it returns the same values, and where no gradient
    reaches any leaf that still requires grad (the program froze them after the output was made),
    nothing else would show it."""
    if type(ref) is not type(new):
        return []
    if isinstance(ref, TensorValue):
        if ref.requires_grad == new.requires_grad:
            return []
        return [Difference(where, "requires grad " + ("before, not after" if ref.requires_grad else "after, not before"))]
    if isinstance(ref, Seq) and len(ref.items) == len(new.items):
        return [d for i, (a, b) in enumerate(zip(ref.items, new.items))
                for d in grad_flag_differences(a, b, f"{where}[{i}]")]
    if isinstance(ref, (Mapping, Obj)):
        a_items = ref.items if isinstance(ref, Mapping) else ref.fields
        b_items = new.items if isinstance(new, Mapping) else new.fields
        return [d for key in a_items if key in b_items
                for d in grad_flag_differences(a_items[key], b_items[key], f"{where}[{key}]")]
    return []
