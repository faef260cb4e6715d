# source: https://github.com/ultralytics/yolov5/commit/305c6a028ad2e7195ae22d881472c1e8652b57cb
# pattern: augassign
# codemod_fixable: yes
# error: C
# ref_semantics: same
# YOLOv5 (ultralytics), training: compute_loss (utils/utils.py) makes its three loss accumulators by unpacking one
# tensor, `lcls, lbox, lobj = torch.zeros(3, 1, device=device)` (tensor iteration: three views that are outputs of
# one multi-view unbind, made without grad), then adds the box loss into one of them in place,
# `lbox += (1.0 - giou).mean()`, with a right-hand side that requires grad. torch raises at that line "A view was
# created in no_grad mode and is being modified inplace with grad mode enabled. This view is the output of a
# function that returns multiple views." Commit 305c6a0 ("compute_loss() leaf variable update", by the maintainer,
# the day after the related #593 fix 23d2bde, which only guarded `lcls *=`) makes the accumulators three separate
# tensors, `torch.zeros(1, device=device)` each (and turns the two out-of-place sums into `+=`, harmless then).
# Library modules: 3304helpers_yolov5_utils.py (ref: ..._fixed.py) and 3304helpers_yolov5_yolo.py (shared; its
# header names the stand-in model). Stand-ins here: two random 64x64 images with four hand-written targets in 3
# classes, train.py's loss hyperparameters of the time, one SGD (nesterov) step; returned: the loss, its items,
# gradients of two Detect convolutions and of the first backbone conv, and a Detect weight after the step.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
yolo = importlib.import_module("3304helpers_yolov5_yolo")
utils = importlib.import_module("3304helpers_yolov5_utils")

# train.py's hyperparameters at the time (the loss-related ones)
hyp = {'lr0': 0.01, 'momentum': 0.937, 'weight_decay': 5e-4, 'giou': 0.05, 'cls': 0.5, 'cls_pw': 1.0, 'obj': 1.0,
       'obj_pw': 1.0, 'iou_t': 0.20, 'anchor_t': 4.0, 'fl_gamma': 0.0}


def compute():
    torch.manual_seed(0)
    nc = 3
    model = yolo.Model(nc=nc)
    model.nc = nc  # attach number of classes to model
    model.hyp = hyp  # attach hyperparameters to model
    model.gr = 1.0  # giou loss ratio (obj_loss = 1.0 or giou)
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=hyp['lr0'], momentum=hyp['momentum'], nesterov=True)

    imgs = torch.rand(2, 3, 64, 64)
    # targets: (image, class, x, y, w, h), normalised
    targets = torch.tensor([[0, 0, 0.30, 0.40, 0.25, 0.30],
                            [0, 2, 0.70, 0.60, 0.40, 0.35],
                            [1, 1, 0.50, 0.45, 0.55, 0.60],
                            [1, 0, 0.20, 0.75, 0.15, 0.20]])

    pred = model(imgs)
    loss, loss_items = utils.compute_loss(pred, targets, model)
    optimizer.zero_grad()
    loss.backward()
    out = {
        "loss": loss.detach(),
        "loss_items": loss_items,
        "detect.m0.weight.grad": model.model[-1].m[0].weight.grad.clone(),
        "detect.m2.bias.grad": model.model[-1].m[2].bias.grad.clone(),
        "stem.0.conv.weight.grad": model.stem[0][0].weight.grad.clone(),
    }
    optimizer.step()
    out["detect.m1.weight.after_step"] = model.model[-1].m[1].weight.detach().clone()
    return out


if __name__ == "__main__":
    compute()
