# Library module for case 3202 (shared shape; this copy imports the original functional module): frgfm/holocron,
# holocron/nn/modules/loss.py at the parent of commit 15fda228 (the commit does not change this file). Written anew at
# small size: _Loss (class weights cast from a float / list / tensor, stored on the module), MultiLabelCrossEntropy,
# LabelSmoothingCrossEntropy (forward calls F.ls_cross_entropy with `self.weight`) and ClassBalancedWrapper (sets the
# wrapped criterion's weight to the class-balanced weights `(1 - beta) / (1 - beta ** num_samples)`) follow the
# source; the other losses and the __repr__ methods are left out.
import importlib
import os
import sys

import torch
from torch import Tensor
import torch.nn as nn
from typing import Optional, Union, Any, List

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
F = importlib.import_module("3202helpers_holocron_functional")


class _Loss(nn.Module):

    def __init__(
        self,
        weight: Optional[Union[float, List[float], Tensor]] = None,
        ignore_index: int = -100,
        reduction: str = 'mean'
    ) -> None:
        super().__init__()
        # Cast class weights if possible
        self.weight: Optional[Tensor]
        if isinstance(weight, (float, int)):
            self.weight = torch.Tensor([weight, 1 - weight])
        elif isinstance(weight, list):
            self.weight = torch.Tensor(weight)
        else:
            self.weight = weight
        self.ignore_index = ignore_index
        # Set the reduction method
        if reduction not in ['none', 'mean', 'sum']:
            raise NotImplementedError("argument reduction received an incorrect input")
        else:
            self.reduction = reduction


class MultiLabelCrossEntropy(_Loss):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)

    def forward(self, x: Tensor, target: Tensor) -> Tensor:
        return F.multilabel_cross_entropy(x, target, self.weight, self.ignore_index, self.reduction)


class LabelSmoothingCrossEntropy(_Loss):
    def __init__(self, eps: float = 0.1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.eps = eps

    def forward(self, x: Tensor, target: Tensor) -> Tensor:
        return F.ls_cross_entropy(x, target, self.weight, self.ignore_index, self.reduction, self.eps)


class ClassBalancedWrapper(nn.Module):
    def __init__(self, criterion: nn.Module, num_samples: Tensor, beta: float = 0.99) -> None:
        super().__init__()
        self.criterion = criterion
        self.beta = beta
        cb_weights = (1 - beta) / (1 - beta ** num_samples)
        if self.criterion.weight is None:
            self.criterion.weight = cb_weights
        else:
            self.criterion.weight *= cb_weights.to(device=self.criterion.weight.device)

    def forward(self, x: Tensor, target: Tensor) -> Tensor:
        return self.criterion.forward(x, target)
