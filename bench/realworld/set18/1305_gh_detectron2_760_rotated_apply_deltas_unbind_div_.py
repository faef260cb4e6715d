# source: https://github.com/facebookresearch/detectron2/pull/760
# pattern: inplace_method
# codemod_fixable: yes
# error: C
# ref_semantics: same
# detectron2, detectron2/modeling/box_regression.py, Box2BoxTransformRotated.apply_deltas (rotated RPN / R-CNN): the
# deltas are unbound and rescaled in place, `dx, dy, dw, dh, da = torch.unbind(deltas, dim=1)`, `dx.div_(wx)`, ...,
# `da.div_(wa)`. PR #760 "Fix RuntimeError: diff_view_meta->output_nr_ == 0 for RRPN inferencing" (merged, commit
# c81a8258, working around pytorch/pytorch#31258): column slices and out-of-place division,
# `dx = deltas[:, 0] / wx` and so on. On PyTorch 1.4 the in-place division on an unbind output tripped an internal
# assert even at inference; on current PyTorch, once the deltas require grad, it raises "Output 0 of UnbindBackward0
# is a view and is being modified inplace. This view is the output of a function that returns multiple views".
# The library module is 1305helpers_detectron2_box_regression.py (ref: 1305helpers_detectron2_box_regression_fixed.py).
# Stand-ins: a linear rotated-box regression head on random ROI features predicts the deltas for 4 proposals
# (weights (10, 10, 5, 5, 1) as in the RROI heads' default); the decoded boxes are differentiated, here through an L1
# loss to ground-truth rotated boxes (as detectron2's decoded-box regression losses do), so the deltas require grad.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
box_regression = importlib.import_module("1305helpers_detectron2_box_regression")


def compute():
    torch.manual_seed(0)
    head = nn.Linear(16, 5)
    roi_features = torch.randn(4, 16)
    proposals = torch.tensor([[10.0, 12.0, 8.0, 4.0, 30.0],
                              [40.0, 22.0, 12.0, 6.0, -45.0],
                              [25.0, 30.0, 5.0, 9.0, 90.0],
                              [60.0, 50.0, 20.0, 10.0, 0.0]])
    gt_boxes = proposals + torch.tensor([1.0, -0.5, 1.5, 0.5, 5.0])
    transform = box_regression.Box2BoxTransformRotated(weights=(10.0, 10.0, 5.0, 5.0, 1.0))

    deltas = head(roi_features) * 0.1
    pred_boxes = transform.apply_deltas(deltas, proposals)
    loss = (pred_boxes - gt_boxes).abs().sum(1).mean()
    loss.backward()
    return {"pred_boxes": pred_boxes.detach(), "head.weight": head.weight.grad, "head.bias": head.bias.grad}


if __name__ == "__main__":
    compute()
