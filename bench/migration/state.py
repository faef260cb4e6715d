"""What a run leaves behind, as named tensors, and how two runs differ (bit for bit)."""

from __future__ import annotations

import numbers
from typing import Any, Dict, NamedTuple, Optional

import torch

State = Dict[str, torch.Tensor]


def state_of(obj: Any, prefix: str = "") -> State:
    """Every tensor reachable from ``obj``, detached and cloned, by a stable dotted name: a
    module's parameters, their ``.grad`` and its buffers; an optimizer's state; a leaf's grad;
    numbers as float64 scalars."""
    found: State = {}
    if isinstance(obj, torch.nn.Module):
        for name, p in obj.named_parameters():
            found[f"{prefix}{name}"] = p.detach().clone()
            if p.grad is not None:
                found[f"{prefix}{name}.grad"] = p.grad.detach().clone()
        for name, b in obj.named_buffers():
            found[f"{prefix}{name}"] = b.detach().clone()
    elif isinstance(obj, torch.optim.Optimizer) or (hasattr(obj, "state_dict") and hasattr(obj, "param_groups")):
        sd = obj.state_dict()
        found.update(state_of(sd["state"], f"{prefix}state."))
        found.update(state_of([{k: v for k, v in g.items() if k != "params"} for g in sd["param_groups"]], f"{prefix}groups."))
    elif isinstance(obj, torch.Tensor):
        found[prefix.rstrip(".") or "value"] = obj.detach().cpu().clone()
        if obj.is_leaf and obj.grad is not None:
            found[f"{prefix}grad"] = obj.grad.detach().clone()
    elif isinstance(obj, dict):
        for key in sorted(obj, key=str):
            found.update(state_of(obj[key], f"{prefix}{key}."))
    elif isinstance(obj, (list, tuple)):
        for i, item in enumerate(obj):
            found.update(state_of(item, f"{prefix}{i}."))
    elif hasattr(obj, "to_tuple"):  # transformers ModelOutput
        found.update(state_of(dict(obj), prefix))
    elif isinstance(obj, str):  # a note (an error, "unavailable"): compared like the tensors
        found[f"{prefix}note"] = torch.tensor(list(obj.encode()), dtype=torch.uint8)
    elif isinstance(obj, bool) or obj is None:
        pass
    elif isinstance(obj, numbers.Real):
        found[prefix.rstrip(".")] = torch.tensor(float(obj), dtype=torch.float64)
    return found


class Difference(NamedTuple):
    """How two states of one case differ: how many tensors, the largest gap and where."""
    tensors: int
    compared: int
    max_abs: float
    worst: Optional[str]

    @property
    def identical(self) -> bool:
        return self.tensors == 0


def compare(a: State, b: State) -> Difference:
    """Bit-for-bit comparison (NaN equals NaN); a missing tensor or another shape counts as inf."""
    differing, worst, gap_max = 0, None, 0.0
    for key in sorted(set(a) | set(b)):
        x, y = a.get(key), b.get(key)
        if x is None or y is None or x.shape != y.shape or x.dtype != y.dtype:
            gap = float("inf")
        elif torch.equal(x, y):
            continue
        else:
            if x.is_floating_point() or x.is_complex():
                same_nan = x.isnan() & y.isnan()
                diff = (x.to(torch.float64) - y.to(torch.float64)).abs().masked_fill(same_nan, 0)
                gap = diff.nan_to_num(float("inf")).max().item() if diff.numel() else 0.0
            else:
                gap = (x.to(torch.float64) - y.to(torch.float64)).abs().max().item()
            if gap == 0:  # equal up to NaNs in the same places
                continue
        differing += 1
        if gap >= gap_max:
            gap_max, worst = gap, key
    return Difference(differing, len(set(a) | set(b)), gap_max, worst)
