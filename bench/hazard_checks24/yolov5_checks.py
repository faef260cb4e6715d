"""yolov5 7.0.14 (pip `yolov5`): the three proven findings of `inplacefix check` on main d1b4fd6 (stop 51,
label51c).
- utils/loss.py:199 and utils/segment/loss.py:148, `ComputeLoss.build_targets`: `gain[2:6] = torch.tensor(shape)[...]`
  in the loop over the detection layers, after the previous layer's `t = targets * gain` (202/151) saved `gain`.
  The classes are compiled alone from the shipped files (the package imports cv2, pandas, torchvision, ultralytics,
  which are not met) and built by __new__ with what build_targets reads (na=3, nl=3, anchors, hyp['anchor_t'],
  device; segment: overlap=False). Path: targets (image, class, xywh) requiring grad, three feature maps,
  backward from the target boxes (and, for segment, xywhn): raises (Mul's saved `gain` modified).
  Control: line 199/148 out of place (`gain = torch.cat(...)`): runs. yolov5's own training hands build_targets
  labels that do not require grad: real by this file's convention.
- utils/general.py:956, `non_max_suppression`: `x[i, :4] = torch.mm(weights, x[:, :4]) ... ` after mm saved
  `x[:, :4]`. The line is under `if merge and (1 < n < 3E3)` and `merge = False` is a local constant (line 895):
  the arm never runs. non_max_suppression, xywh2xyxy (general.py) and box_iou (metrics.py) are compiled alone;
  torchvision.ops.nms (torchvision is not importable here) is a stand-in greedy NMS built on box_iou.
  Path: predictions requiring grad, line 919 `x[:, 5:] *= x[:, 4:5]` out of place (as shipped it raises first: the
  mul_ saved the view `x[:, 4:5]` and writes its base, a hazard the check does not report; a `context` scenario),
  backward from the kept detections: runs. Control: line 895 as `merge = True`: raises at the merge write (mm's
  saved `x[:, :4]` modified). False: dead-constant-arm
  (prec51c_probes.py `nms_probe`)."""

import _shim  # noqa: F401
import linecache
import logging
import math
import os
import time
import types

import numpy as np
import torch
from torch import nn
from _check import attempt
from _prec51b import PK2, compile_alone

LOSS = os.path.join(PK2, "yolov5/utils/loss.py")
SEG = os.path.join(PK2, "yolov5/utils/segment/loss.py")
GEN = os.path.join(PK2, "yolov5/utils/general.py")
MET = os.path.join(PK2, "yolov5/utils/metrics.py")
GAIN = "gain[2:6] = torch.tensor(shape)[[3, 2, 3, 2]]  # xyxy gain"
assert linecache.getline(LOSS, 199).strip() == GAIN and linecache.getline(SEG, 148).strip() == GAIN
assert linecache.getline(LOSS, 202).strip().startswith("t = targets * gain")
assert linecache.getline(GEN, 895).strip() == "merge = False  # use merge-NMS"
assert linecache.getline(GEN, 956).strip().startswith("x[i, :4] = torch.mm(weights, x[:, :4])")
L919_OUT = "x = torch.cat((x[:, :5], x[:, 5:] * x[:, 4:5]), 1)"
assert linecache.getline(GEN, 919).strip() == "x[:, 5:] *= x[:, 4:5]  # conf = obj_conf * cls_conf"
OUT = "gain = torch.cat((gain[:2], torch.tensor(shape)[[3, 2, 3, 2]].float(), gain[6:]))"


def targets_run(src, line, segment, control):
    def go():
        ns = compile_alone(src, {"ComputeLoss"}, {"torch": torch, "nn": nn},
                           replace={line: OUT} if control else None)
        m = ns["ComputeLoss"].__new__(ns["ComputeLoss"])
        m.na, m.nl, m.device, m.hyp, m.overlap = 3, 3, torch.device("cpu"), {"anchor_t": 4.0}, False
        m.anchors = torch.tensor([[[1.25, 1.625], [2.0, 3.75], [4.125, 2.875]],
                                  [[1.875, 3.8125], [3.875, 2.8125], [3.6875, 7.4375]],
                                  [[3.625, 2.8125], [4.875, 6.1875], [11.65625, 10.1875]]])
        p = [torch.zeros(2, 3, s, s, 10) for s in (32, 16, 8)]
        torch.manual_seed(0)
        boxes = torch.rand(4, 4) * 0.3 + 0.2
        targets = torch.cat((torch.tensor([[0., 1.], [0., 2.], [1., 0.], [1., 1.]]), boxes.requires_grad_()), 1)
        out = m.build_targets(p, targets)
        loss = sum(b.sum() for b in out[1]) + (sum(b.sum() for b in out[5]) if segment else 0)
        loss.backward()
    return go


def nms(boxes, scores, iou_thres):
    """Stand-in for torchvision.ops.nms: greedy, by descending score."""
    order, keep = scores.argsort(descending=True), []
    iou = NS["box_iou"](boxes.detach(), boxes.detach())
    alive = torch.ones(len(scores), dtype=torch.bool)
    for k in order.tolist():
        if alive[k]:
            keep.append(k)
            alive &= iou[k] <= iou_thres
    return torch.tensor(keep, dtype=torch.long)


NS = {}


def nms_run(merge, shipped=False):
    def go():
        NS.clear()
        NS.update({"torch": torch, "np": np, "time": time, "math": math, "LOGGER": logging.getLogger("y"),
                   "torchvision": types.SimpleNamespace(ops=types.SimpleNamespace(nms=nms))})
        compile_alone(MET, {"box_iou"}, NS)
        replace = {} if shipped else {919: L919_OUT}
        if merge:
            replace[895] = "merge = True"
        compile_alone(GEN, {"non_max_suppression", "xywh2xyxy"}, NS, replace=replace)
        torch.manual_seed(0)
        xy = torch.rand(1, 20, 2) * 40 + 20
        wh = torch.rand(1, 20, 2) * 20 + 10
        conf = torch.rand(1, 20, 4) * 0.5 + 0.5
        pred = torch.cat((xy, wh, conf), 2).requires_grad_()
        out = NS["non_max_suppression"](pred * 1, conf_thres=0.25, iou_thres=0.3)
        assert len(out[0]) > 1
        out[0].sum().backward()
    return go


attempt("yolov5/utils/loss.py:199:IPF104", "path", "build_targets, targets requiring grad, 3 layers, backward",
        targets_run(LOSS, 199, False, False))
attempt("yolov5/utils/loss.py:199:IPF104", "control", "line 199 out of place (torch.cat)",
        targets_run(LOSS, 199, False, True))
attempt("yolov5/utils/segment/loss.py:148:IPF104", "path", "segment build_targets, targets requiring grad, backward",
        targets_run(SEG, 148, True, False))
attempt("yolov5/utils/segment/loss.py:148:IPF104", "control", "line 148 out of place (torch.cat)",
        targets_run(SEG, 148, True, True))
attempt("yolov5/utils/general.py:956:IPF104", "path", "non_max_suppression (merge = False as shipped; line 919 "
        "out of place), predictions requiring grad, backward", nms_run(False))
attempt("yolov5/utils/general.py:956:IPF104", "control", "as the path with line 895 as `merge = True`", nms_run(True))
attempt("yolov5/utils/general.py:956:IPF104", "context", "non_max_suppression fully as shipped: raises at line 919 "
        "(not reported by the check)", nms_run(False, shipped=True))
