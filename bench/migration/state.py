"""What a run leaves behind, as named tensors, and how two runs differ (bit for bit, or within a
few ulps where the runs execute other kernels)."""

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


# Where two runs execute other kernel sequences (a rewritten library against the original: a
# clone and an out-of-place op for an in-place one), the last bits of a result may depend on the
# CPU: MKL and ATen pick their code path by instruction set, and a reassociated sum moves by an
# ulp. The rewritten tiers are compared with this many ulps of each tensor's dtype, relative to
# its largest magnitude (tests/final_state.py's REWRITE_ULPS); a real difference (a lost update, a
# gradient gone) is orders of magnitude larger. The original against itself runs the same
# kernels: bit for bit.
REWRITE_ULPS = 8


class Difference(NamedTuple):
    """How two states of one case differ: how many tensors differ beyond the tolerance, how many
    were compared, the largest gap and where; ``close``: tensors that are not bit-identical but
    within the tolerance (always 0 for a bit-for-bit comparison)."""
    tensors: int
    compared: int
    max_abs: float
    worst: Optional[str]
    close: int = 0

    @property
    def identical(self) -> bool:
        """No tensor differs beyond the tolerance (bit for bit where ``ulps`` was 0)."""
        return self.tensors == 0

    @property
    def bit_identical(self) -> bool:
        return self.tensors == 0 and self.close == 0


def allowed_gap(x: torch.Tensor, y: torch.Tensor, ulps: int) -> float:
    """``ulps`` units in the last place of the dtype, scaled by the larger tensor's largest
    magnitude; 0 for ``ulps=0``, integers and empty tensors (bit for bit)."""
    if not ulps or not (x.is_floating_point() or x.is_complex()) or not x.numel():
        return 0.0
    scale = max(x.abs().double().nan_to_num(0, 0, 0).max().item(), y.abs().double().nan_to_num(0, 0, 0).max().item())
    finfo = torch.finfo(x.dtype)
    return ulps * finfo.eps * max(scale, finfo.tiny)


def compare(a: State, b: State, ulps: int = 0) -> Difference:
    """Compare two states: bit for bit with ``ulps=0`` (NaN equals NaN), else up to ``ulps`` ulps
    of each dtype (``allowed_gap``); a missing tensor or another shape or dtype counts as inf."""
    differing, close, worst, gap_max = 0, 0, None, 0.0
    for key in sorted(set(a) | set(b)):
        x, y = (t.to_dense() if t is not None and t.layout != torch.strided else t for t in (a.get(key), b.get(key)))  # sparse: as dense
        if x is None or y is None or x.shape != y.shape or x.dtype != y.dtype:
            gap = float("inf")
        elif torch.equal(x, y):
            continue
        else:
            if x.is_floating_point() or x.is_complex():
                same_nan = x.isnan() & y.isnan()
                diff = (x.to(torch.complex128 if x.is_complex() else torch.float64)
                        - y.to(torch.complex128 if y.is_complex() else torch.float64)).abs().masked_fill(same_nan, 0)
                gap = diff.nan_to_num(float("inf")).max().item() if diff.numel() else 0.0
            else:
                gap = (x.to(torch.float64) - y.to(torch.float64)).abs().max().item()
            if gap == 0:  # equal up to NaNs in the same places
                continue
            if gap <= allowed_gap(x, y, ulps):
                close += 1
                continue
        differing += 1
        if gap >= gap_max:
            gap_max, worst = gap, key
    return Difference(differing, len(set(a) | set(b)), gap_max, worst, close)
