# reference fix for 3303: detectron2 commit ee0cbd8 (PR #760) in the library module
# (3303helpers_d2_box_regression_fixed.py): columns taken by indexing, deltas divided out of place.
import importlib
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
box_regression = importlib.import_module("3303helpers_d2_box_regression_fixed")
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
