# source: https://github.com/frgfm/holocron/commit/af956bae45e6716830b05771d518769cfb80f4ed
# pattern: subscript_assign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# holocron (frgfm), YOLOv1 training: _YOLO._compute_losses (yolo.py) takes the square root of the selected
# predicted boxes' (xmax, ymax) columns in place and writes the result back over the same columns,
# `selected_pred_boxes[..., 2:] = selected_pred_boxes[..., 2:].sqrt_()`: sqrt_ saves its output (the column view)
# for the backward and the slice assignment then copies into that very memory, so loss.backward() raises "one of
# the variables needed for gradient computation has been modified by an inplace operation" (output 0 of
# SqrtBackward0). Commit af956bae ("Fixed YOLO loss gradient computation / Inplace operation made gradient
# computation fail", by the maintainer) sums two mse terms, the xy columns and `.sqrt()` (out of place) of the wh
# columns of predictions and targets.
# The library module is 3301helpers_holocron_yolo.py (ref: ..._fixed.py); its header names the stand-ins
# (torchvision's box_iou, a small backbone). Stand-ins here: one SGD training step on two random 64x64 images with
# hand-written ground-truth boxes in pixel coordinates (the predicted boxes' x, y are in pixels in the source);
# returned: the three losses, gradients of the first conv and the last linear layer, and that layer after the step.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
yolo = importlib.import_module("3301helpers_holocron_yolo")


def compute():
    torch.manual_seed(0)
    model = yolo.yolov1(num_classes=3, num_anchors=2)
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)

    images = torch.rand(2, 3, 64, 64)
    gt_boxes = [torch.tensor([[4., 6., 20., 22.], [30., 28., 50., 60.]]),
                torch.tensor([[10., 12., 40., 30.]])]
    gt_labels = [torch.tensor([0, 2]), torch.tensor([1])]

    optimizer.zero_grad()
    loss_dict = model(images, gt_boxes, gt_labels)
    loss = sum(loss_dict.values())
    loss.backward()
    out = {k: v.detach() for k, v in loss_dict.items()}
    out["backbone.0.weight.grad"] = model.backbone[0].weight.grad.clone()
    out["classifier.3.weight.grad"] = model.classifier[3].weight.grad.clone()
    out["classifier.3.bias.grad"] = model.classifier[3].bias.grad.clone()
    optimizer.step()
    out["classifier.3.weight.after_step"] = model.classifier[3].weight.detach().clone()
    return out


if __name__ == "__main__":
    compute()
