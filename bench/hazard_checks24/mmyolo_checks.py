"""mmyolo 0.6.0: the three proven findings of `inplacefix check` on main d1b4fd6 (stop 51, label51c), all one
shape: in the loss's loop over the feature levels, `scaled_factor[2:6] = torch.tensor(bbox_preds[i].shape)[[3, 2,
3, 2]]` (models/dense_heads/yolov5_head.py:557 in `loss_by_feat`, :788 in `_loss_by_feat_with_ignore`,
yolov5_ins_head.py:286) after the previous level's `batch_targets_scaled = batch_targets_normed * scaled_factor`
(561/792/290) saved `scaled_factor` (the multiply saves it for the targets' gradient). mmyolo's heads need
mmdet/mmcv/mmengine, which are not met: the driver replays the shipped statements (the `scaled_factor = torch.ones`
line and the lines from the write to the multiply, read from each file) in a loop over three levels, with
`batch_targets_normed` (image, class, xywh, prior index: what `_convert_gt_to_norm_format` builds) requiring grad,
then backward from the scaled targets of all levels (the loss reads them as box targets). Path: raises (Mul's
saved scaled_factor modified). Control: the write out of place (`scaled_factor = torch.cat(...)`): runs.
mmyolo's training hands it ground-truth boxes that do not require grad: real by this file's convention (as
yolov5's build_targets, yolov5_checks.py)."""

import _shim  # noqa: F401
import linecache
import os
import textwrap

import torch
from _check import attempt
from _prec51b import PK2

HEADS = os.path.join(PK2, "mmyolo/models/dense_heads")
# (file, line of `scaled_factor = torch.ones(...)`, line of the write, line of the multiply)
CASES = [("yolov5_head.py", 541, 557, 561), ("yolov5_head.py", 748, 788, 792), ("yolov5_ins_head.py", 269, 286, 290)]
OUT = ("scaled_factor = torch.cat((scaled_factor[:2], torch.tensor(bbox_preds[i].shape)[[3, 2, 3, 2]].float(),"
       " scaled_factor[6:]))\n")


def code(name, ones, write, mul, control):
    path = os.path.join(HEADS, name)
    first = linecache.getline(path, ones).strip()
    assert first.startswith("scaled_factor = torch.ones("), (name, ones, first)
    assert linecache.getline(path, write).strip().startswith("scaled_factor[2:6] = torch.tensor(")
    assert linecache.getline(path, mul).strip() == "batch_targets_scaled = batch_targets_normed * scaled_factor"
    body = textwrap.dedent("".join(linecache.getline(path, n) for n in range(write, mul + 1)))
    if control:
        body = OUT + textwrap.dedent("".join(linecache.getline(path, n) for n in range(write + 2, mul + 1)))
    return first + "\nfor i in range(3):\n" + textwrap.indent(body, "    ") + \
        "    outs.append(batch_targets_scaled)\n", int(first.split("torch.ones(")[1].split(",")[0])


def run(case, control):
    def go():
        src, width = code(*case, control)
        torch.manual_seed(0)
        n = 4
        boxes = (torch.rand(n, 4) * 0.3 + 0.2).requires_grad_()
        head = torch.tensor([[0., 1.], [0., 2.], [1., 0.], [1., 1.]])
        extra = torch.zeros(n, width - 7)
        rows = torch.cat((head, boxes, extra), 1)
        batch_targets_normed = torch.cat((rows.repeat(3, 1, 1), torch.arange(3.).view(3, 1, 1).expand(3, n, 1)), 2)
        ns = {"torch": torch, "device": torch.device("cpu"), "batch_targets_normed": batch_targets_normed,
              "bbox_preds": [torch.zeros(2, 12, s, s) for s in (32, 16, 8)], "outs": []}
        exec(compile(src, case[0], "exec"), ns)
        sum(t.sum() for t in ns["outs"]).backward()
    return go


for case in CASES:
    finding = f"mmyolo/models/dense_heads/{case[0]}:{case[2]}:IPF104"
    attempt(finding, "path", f"lines {case[1]}, {case[2]}-{case[3]} replayed over 3 levels, targets requiring grad, "
            "backward", run(case, False))
    attempt(finding, "control", f"line {case[2]} out of place (torch.cat)", run(case, True))
