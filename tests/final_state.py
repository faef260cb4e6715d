"""Run a fixture's ``example()`` and read back everything it leaves behind (and the kernels it
ran), for comparisons bit for bit where the same kernels ran and within a few ulps elsewhere:
outputs, every gradient, parameters and buffers, optimizer state, mutated inputs.

A rewrite that only keeps outputs and gradients can still change a program (an init helper that
no longer fills its argument, an optimizer step that no longer updates): the final state shows it.
"""

from __future__ import annotations

import numbers
import pathlib
from typing import Any, Dict, List, Optional, Tuple

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from codemod.runtime.harness import load_module

State = Dict[str, torch.Tensor]


def state_of(obj: Any, prefix: str = "") -> State:
    """Every tensor reachable from ``obj``, detached and cloned, by a stable dotted name
    (a module's parameters, their ``.grad`` and its buffers; an optimizer's state; a leaf's grad)."""
    found: State = {}
    if isinstance(obj, torch.nn.Module):
        for name, p in obj.named_parameters():
            found[f"{prefix}{name}"] = p.detach().clone()
            if p.grad is not None:
                found[f"{prefix}{name}.grad"] = p.grad.detach().clone()
        for name, b in obj.named_buffers():
            found[f"{prefix}{name}"] = b.detach().clone()
    elif isinstance(obj, torch.optim.Optimizer):
        sd = obj.state_dict()
        found.update(state_of(sd["state"], f"{prefix}state."))
        found.update(state_of([{k: v for k, v in g.items() if k != "params"} for g in sd["param_groups"]], f"{prefix}groups."))
    elif isinstance(obj, torch.Tensor):
        found[prefix.rstrip(".") or "value"] = obj.detach().clone()
        if obj.is_leaf and obj.grad is not None:
            found[f"{prefix}grad"] = obj.grad.detach().clone()
    elif isinstance(obj, dict):
        for key in sorted(obj, key=str):
            found.update(state_of(obj[key], f"{prefix}{key}."))
    elif isinstance(obj, (list, tuple)):
        for i, item in enumerate(obj):
            found.update(state_of(item, f"{prefix}{i}."))
    elif isinstance(obj, bool) or obj is None:
        pass
    elif isinstance(obj, numbers.Real):
        found[prefix.rstrip(".")] = torch.tensor(float(obj), dtype=torch.float64)
    return found


# Where a rewrite runs other kernels than its reference (a clone and an out-of-place op against
# the reference's own copies), the last bits depend on the CPU: MKL and ATen pick their code path
# by the instruction set (AVX-512, AVX2, none), and a sum reassociated by a vector width moves the
# result by an ulp. A few ulps of the dtype, relative to the tensor's largest magnitude, is what
# such a rewrite may differ by on another machine; a real difference (a lost gradient, a write
# that went missing) is orders of magnitude larger.
REWRITE_ULPS = 8


class Run(dict):
    """A run's final state (``State``), with the kernels it ran (``KernelTrace``): two runs of
    one trace are compared bit for bit, two of different traces within ``REWRITE_ULPS``."""

    kernels: Tuple[tuple, ...] = ()


def ulps_for(a: State, b: State) -> int:
    """0 (bit for bit) where both runs ran the same kernels on the same layouts, in the same
    order (then no CPU can tell them apart); ``REWRITE_ULPS`` otherwise, or where either run was
    not traced."""
    ka, kb = getattr(a, "kernels", None), getattr(b, "kernels", None)
    return 0 if ka and kb and ka == kb else REWRITE_ULPS


class KernelTrace(TorchDispatchMode):
    """Records every ATen kernel a run dispatches (forward and backward), with the dtype, shape,
    strides and storage offset of each tensor argument: what decides which kernel code path runs
    and how a reduction is split. It calls each op unchanged."""

    def __init__(self):
        super().__init__()
        self.kernels: List[tuple] = []

    @staticmethod
    def _layout(value):
        if isinstance(value, torch.Tensor):
            return (str(value.dtype), tuple(value.shape), tuple(value.stride()), value.storage_offset())
        if isinstance(value, (list, tuple)):
            return tuple(KernelTrace._layout(v) for v in value)
        return type(value).__name__

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.kernels.append((str(func), self._layout(args), tuple(sorted((k, self._layout(v)) for k, v in kwargs.items()))))
        return func(*args, **kwargs)


def differences(a: State, b: State, ulps: int = 0) -> Dict[str, float]:
    """Names whose tensors differ, with the max abs difference (inf: missing, other shape or
    dtype). ``ulps=0``: bit for bit, for runs of the same kernels; else up to ``ulps`` units in
    the last place of the dtype, scaled by the larger tensor's largest magnitude."""
    out: Dict[str, float] = {}
    for key in sorted(set(a) | set(b)):
        x, y = a.get(key), b.get(key)
        if x is None or y is None or x.shape != y.shape or x.dtype != y.dtype:
            out[key] = float("inf")
        elif not torch.equal(x, y):
            both_nan = x.isnan() & y.isnan() if x.is_floating_point() else torch.zeros_like(x, dtype=torch.bool)
            gap = (x.double() - y.double()).abs().masked_fill(both_nan, 0)
            allowed = 0.0
            if ulps and x.is_floating_point() and x.numel():
                scale = torch.maximum(x.double().abs().nan_to_num(0, 0, 0).max(), y.double().abs().nan_to_num(0, 0, 0).max())
                allowed = ulps * torch.finfo(x.dtype).eps * max(scale.item(), torch.finfo(x.dtype).tiny)
            if gap.max().item() > allowed or (x.isnan() != y.isnan()).any():
                out[key] = gap.nan_to_num(float("inf")).max().item()
    return out


class InPlaceUnderNoGrad(TorchFunctionMode):
    """Run in-place tensor calls (``add_``, ``-=``, ``x[i] = v``) with grad off: the meaning a
    ``with torch.no_grad():`` around the update gives. ``leaf_only``: only where the target is a
    leaf that requires grad, or a view of one (the calls that raise the leaf error)."""

    def __init__(self, leaf_only: bool = True):
        super().__init__()
        self.leaf_only = leaf_only

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        inplace = name == "__setitem__" or (name.endswith("_") and not name.endswith("__")) or name.startswith("__i")
        if inplace and args and isinstance(args[0], torch.Tensor) and torch.is_grad_enabled():
            target = args[0]._base if args[0]._base is not None else args[0]
            if not self.leaf_only or (target.is_leaf and target.requires_grad):
                return self.update(func, args, kwargs)
        return func(*args, **kwargs)

    def update(self, func, args, kwargs):
        with torch.no_grad():
            return func(*args, **kwargs)


def run_example(path: pathlib.Path, mode: Optional[TorchFunctionMode] = None, seed: int = 0) -> Run:
    """Load ``path`` fresh, seed, call ``example()`` (under ``mode`` if given) and read its state,
    with the kernels it ran (``Run.kernels``)."""
    module = load_module(path.read_text(encoding="utf-8"), str(path), f"fixture_{path.stem.replace('.', '_')}")
    torch.manual_seed(seed)
    trace = KernelTrace()
    if mode is None:
        with trace:
            result = module.example()
        run = Run(state_of(result))
    else:
        with mode:  # reading the state is a read under the mode too (WritesIntoCopies sees it)
            with trace:
                result = module.example()
            run = Run(state_of(result))
    run.kernels = tuple(trace.kernels)
    return run
