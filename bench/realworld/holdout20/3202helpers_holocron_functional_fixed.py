# Library module for case 3202 (reference): frgfm/holocron, holocron/nn/functional.py after commit 15fda228
# ("fix: Fixed inplace loss weight adjustments"): `logpt = logpt * weight.view(...)` in multilabel_cross_entropy and
# ls_cross_entropy; the rest as in 3202helpers_holocron_functional.py.
import torch
from torch import Tensor
import torch.nn.functional as F
from typing import Optional


def multilabel_cross_entropy(
    x: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    ignore_index: int = -100,
    reduction: str = 'mean'
) -> Tensor:
    """Implements the cross entropy loss for multi-label targets"""

    # log(P[class]) = log_softmax(score)[class]
    logpt = F.log_softmax(x, dim=1)

    # Ignore index (set loss contribution to 0)
    valid_idxs = torch.ones(logpt.shape[1], dtype=torch.bool, device=x.device)
    if ignore_index >= 0 and ignore_index < x.shape[1]:
        valid_idxs[ignore_index] = False

    # Weight
    if weight is not None:
        # Tensor type
        if weight.type() != x.data.type():
            weight = weight.type_as(x.data)
        logpt = logpt * weight.view(1, -1, *([1] * (x.ndim - 2)))  # type: ignore[attr-defined]

    # CE Loss
    loss = - target * logpt

    # Loss reduction
    if reduction == 'sum':
        loss = loss[:, valid_idxs].sum()
    else:
        loss = loss[:, valid_idxs].sum(dim=1)
        if reduction == 'mean':
            loss = loss.mean()

    return loss


def ls_cross_entropy(
    x: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    ignore_index: int = -100,
    reduction: str = 'mean',
    eps: float = 0.1
) -> Tensor:
    """Implements the label smoothing cross entropy loss from
    `"Attention Is All You Need" <https://arxiv.org/pdf/1706.03762.pdf>`_
    """

    if eps == 0:
        return F.cross_entropy(x, target, weight, ignore_index=ignore_index, reduction=reduction)

    # log(P[class]) = log_softmax(score)[class]
    logpt = F.log_softmax(x, dim=1)

    # Ignore index (set loss contribution to 0)
    valid_idxs = torch.ones(logpt.shape[1], dtype=torch.bool, device=x.device)
    if ignore_index >= 0 and ignore_index < x.shape[1]:
        valid_idxs[ignore_index] = False

    # Weight
    if weight is not None:
        # Tensor type
        if weight.type() != x.data.type():
            weight = weight.type_as(x.data)
        logpt = logpt * weight.view(1, -1, *([1] * (logpt.ndim - 2)))  # type: ignore[attr-defined]

    # Loss reduction
    if reduction == 'sum':
        loss = -logpt[:, valid_idxs].sum()
    else:
        loss = -logpt[:, valid_idxs].sum(dim=1)
        if reduction == 'mean':
            loss = loss.mean()

    # Smooth the labels
    return eps / x.shape[1] * loss + (1 - eps) * F.nll_loss(logpt, target, weight,
                                                            ignore_index=ignore_index, reduction=reduction)
