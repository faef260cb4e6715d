"""Out-of-place dropout drawing its mask as the in-place one does, on devices with a fused kernel.

On CUDA (and other devices with a fused dropout kernel) ``torch.dropout`` out of place draws its
mask inside the fused kernel (``native_dropout``), while ``torch.dropout_`` in place composes
``bernoulli_``, a division and a multiply: from the same seed the two keep different entries. The
CPU has no fused kernel, so both compose there. The commonest fix of all, ``nn.Dropout(inplace=True)``
-> ``inplace=False``, then computes the same function with other random draws on a GPU, and no
comparison of values can tell it from a wrong rewrite (found on an H200 at stop 49: a verified CPU
fix of sockeye's feed-forward block was "not verified" on CUDA). Under :class:`SameDropoutDraws` the
out-of-place dropout of a tensor on such a device takes the in-place one's composition (the CPU's),
so the original and the rewritten program draw the same mask from the same seed, and the same
gradient flows (the mask times the scale). CPU tensors are left alone: nothing changes there.
"""

from __future__ import annotations

from typing import Optional

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

__all__ = ["SameDropoutDraws", "composed_dropout"]


def composed_dropout(x: torch.Tensor, p: float) -> torch.Tensor:
    """What ``torch.dropout_`` computes, out of place: a ``bernoulli_(1 - p)`` mask laid out as ``x``
    divided by ``1 - p``, times ``x`` (ATen's ``_dropout_impl`` for ``0 < p < 1``)."""
    noise = torch.empty_like(x).bernoulli_(1 - p).div_(1 - p)  # strides kept, as ATen does
    return x * noise


def _rerouted(func, args, kwargs) -> Optional[torch.Tensor]:
    """The composed dropout where ``func`` is an out-of-place dropout in training, with
    ``0 < p < 1``, of a plain tensor on a device other than the CPU; else None."""
    if func is F.dropout:
        names = ("input", "p", "training", "inplace")
        bound = dict(zip(names, args), **kwargs)
        x, p = bound.get("input"), bound.get("p", 0.5)
        training, inplace = bound.get("training", True), bound.get("inplace", False)
    elif func is torch.dropout:
        bound = dict(zip(("input", "p", "train"), args), **kwargs)
        x, p, training, inplace = bound.get("input"), bound.get("p"), bound.get("train"), False
    else:
        return None
    if inplace or training is not True or not isinstance(p, (int, float)) or not 0 < p < 1:
        return None
    if type(x) not in (torch.Tensor, torch.nn.Parameter) or x.device.type == "cpu" or x.is_nested or not x.numel():
        return None
    return composed_dropout(x, float(p))


class SameDropoutDraws(TorchFunctionMode):
    """Out-of-place dropout draws its mask as the in-place one does (see the module)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = _rerouted(func, args, kwargs)
        return func(*args, **kwargs) if out is None else out
