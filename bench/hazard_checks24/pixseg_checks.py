"""pixseg 0.8.2 (pixseg/learn/criteria.py:85 `DiceLoss.forward`): the proven finding of `inplacefix check` (stop
54, fresh54b, end of stop). With class weights, `target_one_hot *= self.weight.view(shape)` writes the one-hot target
that `intersection = input * target_one_hot` (:76) saved for the gradient of the softmax input. Own use: training
with `DiceLoss(weight=...)` (every criterion of pixseg's CRITERION_ZOO takes `weight`) raises at backward. The
`DiceLoss` class is compiled alone from the shipped file (its base `_WeightedLoss` from torch; nothing of pixseg
imported)."""

import _shim  # noqa: F401
import linecache

import torch
from torch.nn import functional as F
from torch.nn.modules.loss import _WeightedLoss
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("pixseg/learn/criteria.py")
assert linecache.getline(PATH, 85).strip() == "target_one_hot *= self.weight.view(shape)"
assert linecache.getline(PATH, 76).strip() == "intersection = input * target_one_hot"


def run(weighted=True, control=False):
    replace = {85: "target_one_hot = target_one_hot * self.weight.view(shape)"} if control else {}
    ns = compile_alone(PATH, {"DiceLoss"}, {"torch": torch, "F": F, "Tensor": torch.Tensor,
                                            "_WeightedLoss": _WeightedLoss, "warnings": None,
                                            "register_criterion": lambda name=None: (lambda c: c)},
                       replace=replace)

    def go():
        loss_fn = ns["DiceLoss"](weight=torch.tensor([1.0, 2.0, 3.0]) if weighted else None)
        logits = torch.randn(2, 3, 5, 5, requires_grad=True)
        target = torch.randint(0, 3, (2, 5, 5))
        loss_fn(logits, target).backward()
    return go


FID = "pixseg/learn/criteria.py:85:IPF101"
attempt(FID, "path", "DiceLoss(weight=...) on logits that require grad (training): raises", run())
attempt(FID, "control", "the same with :85 out of place: runs", run(control=True))
attempt(FID, "context", "DiceLoss() without class weights: runs (:85 not reached)", run(weighted=False))
