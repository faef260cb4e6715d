# Library module for case 3102 (reference: the maintainers' fix, commit 169ec1e, PR #1288).
# Lightning-AI/torchmetrics, src/torchmetrics/functional/pairwise/cosine.py (_pairwise_cosine_similarity_update,
# pairwise_cosine_similarity), src/torchmetrics/functional/pairwise/helpers.py (_check_input,
# _reduce_distance_matrix) and src/torchmetrics/utilities/compute.py (_safe_matmul), read at the parent of commit
# 169ec1e ("Fix inplace operation in `pairwise_cosine_similarity` (#1288)", 2022-10-25). Written anew at small size
# (not copied): the input check that sets `y = x.clone()` and `zero_diagonal` when only x is given, the update that
# normalises the rows with `x /= norm.unsqueeze(1)` and `y /= norm.unsqueeze(1)` (the statements at fault: torch.norm
# saved the very tensor the division then rewrites), the float16-safe matmul, the diagonal zeroing and the reduction,
# follow the source. Stand-ins: the docstrings, doctest examples and type aliases (Literal) are left out; the module
# holds only the cosine metric of the pairwise package.
from typing import Optional, Tuple

import torch
from torch import Tensor


def _safe_matmul(x: Tensor, y: Tensor) -> Tensor:
    if x.dtype == torch.float16 or y.dtype == torch.float16:
        return (x.float() @ y.T.float()).half()
    return x @ y.T


def _check_input(x: Tensor, y: Optional[Tensor] = None, zero_diagonal: Optional[bool] = None) -> Tuple[Tensor, Tensor, bool]:
    if x.ndim != 2:
        raise ValueError(f"Expected argument `x` to be a 2D tensor of shape `[N, d]` but got {x.shape}")
    if y is not None:
        if y.ndim != 2 or y.shape[1] != x.shape[1]:
            raise ValueError("Expected argument `y` to be a 2D tensor of shape `[M, d]` where"
                             " `d` should be same as the last dimension of `x`")
        zero_diagonal = False if zero_diagonal is None else zero_diagonal
    else:
        y = x.clone()
        zero_diagonal = True if zero_diagonal is None else zero_diagonal
    return x, y, zero_diagonal


def _reduce_distance_matrix(distmat: Tensor, reduction: Optional[str] = None) -> Tensor:
    if reduction == "mean":
        return distmat.mean(dim=-1)
    if reduction == "sum":
        return distmat.sum(dim=-1)
    if reduction is None or reduction == "none":
        return distmat
    raise ValueError(f"Expected reduction to be one of `['mean', 'sum', None]` but got {reduction}")


def _pairwise_cosine_similarity_update(x: Tensor, y: Optional[Tensor] = None, zero_diagonal: Optional[bool] = None) -> Tensor:
    x, y, zero_diagonal = _check_input(x, y, zero_diagonal)

    norm = torch.norm(x, p=2, dim=1)
    x = x / norm.unsqueeze(1)
    norm = torch.norm(y, p=2, dim=1)
    y = y / norm.unsqueeze(1)

    distance = _safe_matmul(x, y)
    if zero_diagonal:
        distance.fill_diagonal_(0)
    return distance


def pairwise_cosine_similarity(x: Tensor, y: Optional[Tensor] = None, reduction: Optional[str] = None,
                               zero_diagonal: Optional[bool] = None) -> Tensor:
    distance = _pairwise_cosine_similarity_update(x, y, zero_diagonal)
    return _reduce_distance_matrix(distance, reduction)
