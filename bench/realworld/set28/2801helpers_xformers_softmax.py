# Library module for case 2801 (original).
# facebookresearch/xformers, xformers/triton/softmax.py, read at the parent of commit e75ec39 ("[Minor] Fix #142, check
# softmax fallback paths (#151)", 2021-12-13). Written anew at small size (not copied): softmax / log_softmax and
# _softmax_dispatch with its PyTorch fallback (`x += mask`, then torch.softmax / torch.log_softmax over the last
# dimension), the module-level warning flags and the CUDA / Triton gate follow the source. Stand-ins: the Triton kernel
# (`_softmax_triton`, a torch.autograd.Function over triton's k_softmax) is a class that raises if called; it is only
# reached for CUDA tensors, and the case runs on CPU, where the source takes the fallback as well. triton's
# OutOfResources exception is a local class.
import logging
from typing import Optional

import torch

_triton_registered_overflow = False
_triton_registered_warnings = False


class OutOfResources(Exception):
    pass


class _softmax_triton(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, mask, log_outputs, causal):
        raise NotImplementedError("the Triton kernel is not part of this reduction (CUDA only)")


def softmax(x: torch.Tensor, mask: Optional[torch.Tensor] = None, causal: bool = False) -> torch.Tensor:
    return _softmax_dispatch(x, log=False, mask=mask, causal=causal)


def log_softmax(x: torch.Tensor, mask: Optional[torch.Tensor] = None, causal: bool = False) -> torch.Tensor:
    return _softmax_dispatch(x, log=True, mask=mask, causal=causal)


def _softmax_dispatch(x: torch.Tensor, log: bool, mask: Optional[torch.Tensor], causal: bool = False) -> torch.Tensor:
    # Triton is used on CUDA tensors when it did not fail before; PyTorch otherwise.
    global _triton_registered_overflow
    global _triton_registered_warnings

    try:
        if torch.cuda.is_available() and x.is_cuda and not _triton_registered_overflow:
            return _softmax_triton.apply(x, mask, log, causal)
    except (OutOfResources, RuntimeError) as e:
        _triton_registered_overflow = True
        logging.warning("Triton softmax kernel register spillover or invalid image caught.")
        logging.warning(e)

    if causal and not _triton_registered_warnings:
        logging.warning("Triton softmax could not be used. The causal flag gives no benefit with PyTorch softmax.")
        _triton_registered_warnings = True

    if mask is not None:
        x += mask

    if log:
        return torch.log_softmax(x, dim=-1)
    else:
        return torch.softmax(x, dim=-1)
