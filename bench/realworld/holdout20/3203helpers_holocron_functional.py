# Library module for case 3203 (shared by the original and the reference: the fix is in the test, not here):
# frgfm/holocron, holocron/nn/functional.py at the parent of commit 73742376 (2021-03-18). Written anew at small size:
# focal_loss, multilabel_cross_entropy and ls_cross_entropy follow the source (their in-place weight rescaling,
# fixed later by 15fda228, is case 3202's subject; the test below never differentiates a weighted loss). The other
# functions of the module are left out.
import torch
from torch import Tensor
import torch.nn.functional as F
from typing import Optional


def focal_loss(
    x: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    ignore_index: int = -100,
    reduction: str = 'mean',
    gamma: float = 2.
) -> Tensor:
    """Implements the focal loss from
    `"Focal Loss for Dense Object Detection" <https://arxiv.org/pdf/1708.02002.pdf>`_
    """

    # log(P[class]) = log_softmax(score)[class]
    logpt = F.log_softmax(x, dim=1)

    # Compute pt and logpt only for target classes (the remaining will have a 0 coefficient)
    logpt = logpt.transpose(1, 0).flatten(1).gather(0, target.view(1, -1)).squeeze()
    # Ignore index (set loss contribution to 0)
    valid_idxs = torch.ones(target.view(-1).shape[0], dtype=torch.bool, device=x.device)
    if ignore_index >= 0 and ignore_index < x.shape[1]:
        valid_idxs[target.view(-1) == ignore_index] = False

    # Get P(class)
    pt = logpt.exp()

    # Weight
    if weight is not None:
        # Tensor type
        if weight.type() != x.data.type():
            weight = weight.type_as(x.data)
        at = weight.gather(0, target.data.view(-1))
        logpt *= at

    # Loss
    loss = -1 * (1 - pt) ** gamma * logpt

    # Loss reduction
    if reduction == 'sum':
        loss = loss[valid_idxs].sum()
    elif reduction == 'mean':
        loss = loss[valid_idxs].mean()
    else:
        # if no reduction, reshape tensor like target
        loss = loss.view(*target.shape)

    return loss


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
        logpt *= weight.view(1, -1, *([1] * (x.ndim - 2)))  # type: ignore[attr-defined]

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
        logpt *= weight.view(1, -1, *([1] * (logpt.ndim - 2)))  # type: ignore[attr-defined]

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
