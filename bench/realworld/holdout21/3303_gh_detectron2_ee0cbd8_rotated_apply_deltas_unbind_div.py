# source: https://github.com/facebookresearch/detectron2/commit/ee0cbd8c67622ff2753493ce0dcfeb3e3dd9945e
# pattern: inplace_method
# codemod_fixable: yes
# error: C
# ref_semantics: differs
# detectron2, rotated Fast R-CNN (RROIHeads with RRPN) at inference: FastRCNNOutputs._predict_boxes hands
# `pred_proposal_deltas.view(num_pred * K, 5)` to Box2BoxTransformRotated.apply_deltas (box_regression.py), which
# splits it with `dx, dy, dw, dh, da = torch.unbind(deltas, dim=1)` and scales each column in place,
# `dx.div_(wx)` ... With autograd on, the deltas come from the box predictor's Linear and require grad, so the
# first `div_` raises "Output 0 of Unbind is a view and is being modified inplace. This view is the output
# of a function that returns multiple views" (in 2020 the internal assert "diff_view_meta->output_nr_ == 0",
# pytorch#31258). Commit ee0cbd8 (PR #760, "Fix RuntimeError: diff_view_meta->output_nr_ == 0 for RRPN
# inferencing", reviewed by the maintainer) indexes the columns (`boxes[:, 0]`, ...) and divides out of place,
# `dx = deltas[:, 0] / wx`. (The in-place version also rescaled the predictor's returned deltas themselves.)
# ref_semantics `differs` (stop 52, second reading; was `same`): the fix also stops that rescaling, which the
# returned `pred_proposal_deltas` shows. Run: the original under torch.no_grad() and the reference give the same
# boxes and probabilities bit for bit, but the original's returned deltas are the reference's times
# (0.1, 0.1, 0.2, 0.2, 1.0) per column, 1/weights (as set1/039, set15/805: a fix that drops a write into the
# caller's tensor).
# Library modules: 3303helpers_d2_box_regression.py (ref: ..._fixed.py) and 3303helpers_d2_rotated_fast_rcnn.py
# (shared; its header names its stand-ins). Stand-ins here: the box head is one Linear+ReLU on random pooled
# features, 8 random rotated proposals over two 64x64 images, the predictor's weights as initialised; the model
# is in eval mode and called without torch.no_grad() (the path the report's "inferencing" implies; detectron2's
# own evaluator wraps inference in no_grad, where torch 2.13 raises nothing). Returned: the predicted boxes and
# class probabilities per image and the predictor's deltas (no backward: an inference case).
import importlib
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
box_regression = importlib.import_module("3303helpers_d2_box_regression")
fast_rcnn = importlib.import_module("3303helpers_d2_rotated_fast_rcnn")


def compute():
    torch.manual_seed(0)
    num_classes = 3
    box_head = nn.Sequential(nn.Flatten(), nn.Linear(8 * 4 * 4, 32), nn.ReLU())
    box_predictor = fast_rcnn.FastRCNNOutputLayers(32, num_classes, cls_agnostic_bbox_reg=False, box_dim=5)
    # RROIHeads: cfg.MODEL.ROI_BOX_HEAD.BBOX_REG_WEIGHTS for rotated boxes
    box2box_transform = box_regression.Box2BoxTransformRotated(weights=(10.0, 10.0, 5.0, 5.0, 1.0))
    for module in (box_head, box_predictor):
        module.eval()

    proposals = []
    for n in (5, 3):
        xy = torch.rand(n, 2) * 64
        wh = torch.rand(n, 2) * 24 + 4
        angle = torch.rand(n, 1) * 180 - 90
        proposals.append(fast_rcnn.Instances((64, 64), proposal_boxes=fast_rcnn.RotatedBoxes(torch.cat([xy, wh, angle], 1))))
    box_features = torch.randn(8, 8, 4, 4)  # pooled RoIAlignRotated features of the 8 proposals

    # inference in eval mode, autograd left on (the report: RRPN inferencing)
    pred_class_logits, pred_proposal_deltas = box_predictor(box_head(box_features))
    outputs = fast_rcnn.FastRCNNOutputs(box2box_transform, pred_class_logits, pred_proposal_deltas, proposals, 0.0)
    boxes = outputs.predict_boxes()
    scores = outputs.predict_probs()
    return {
        "boxes_image0": boxes[0].detach(),
        "boxes_image1": boxes[1].detach(),
        "scores_image0": scores[0].detach(),
        "scores_image1": scores[1].detach(),
        "pred_proposal_deltas": pred_proposal_deltas.detach().clone(),
    }


if __name__ == "__main__":
    compute()
