"""mmtrack 0.14.0 (mmtrack/models/trackers/ocsort_tracker.py:128 `OCSORTTracker.vel_direction_batch`;
quasi_dense_tracker.py:248, :259 `QuasiDenseTracker.track`): the proven findings of `inplacefix check` (stop 58,
fresh58, end of stop).
- ocsort :128: `norm = torch.sqrt(speed[:, :, 0] ** 2 + speed[:, :, 1] ** 2) + 1e-6` (:127) saves the column views of
  speed (the pows) and `speed[:, :, 0] /= norm` (:128) writes speed: with boxes that require grad, backward of the
  returned directions raises. Real by this file's convention (boxes that require grad; OC-SORT feeds the directions
  to its assignment cost on the CPU). :129 `speed[:, :, 1] /= norm` raises alike (with :128 through .data), unproven:
  a miss.
- quasi-dense :248 (`scores *= cat_same...`) and :259 (`scores[:i, memo_ind] = 0`): with match_metric 'softmax',
  `scores = feats.softmax(dim=1)` (:238) saves its output and both lines write it. But the scores reach only
  `torch.max(scores[i, :], dim=0)`, whose values are compared with thresholds and whose index picks a memo id:
  track returns the boxes, labels and integer ids, and stores the embeddings; nothing differentiable downstream of
  the softmax leaves the method, so no backward reads what it saved. False in any use (index-only-saver, fresh57's
  group, here with comparisons: fresh58_probes.py). The context returns the matched confidences too (not as shipped):
  then backward reaches the softmax and raises.
The methods are compiled alone from the shipped files, with a stand-in self (the tracker's thresholds, one memo of
three tracks), a stand-in track head (a Linear over box coordinates) and an IoU stand-in for mmdet's bbox_overlaps."""

import _shim  # noqa: F401
import linecache
import types

import torch
import torch.nn.functional as F
from _check import attempt
from _fresh53 import compile_alone, src

OC = src("mmtrack/models/trackers/ocsort_tracker.py")
QD = src("mmtrack/models/trackers/quasi_dense_tracker.py")
assert linecache.getline(OC, 128).strip() == "speed[:, :, 0] /= norm"
assert linecache.getline(OC, 129).strip() == "speed[:, :, 1] /= norm"
assert linecache.getline(QD, 238).strip() == "scores = feats.softmax(dim=1)"
assert linecache.getline(QD, 248).strip() == "scores *= cat_same.float().to(scores.device)"
assert linecache.getline(QD, 259).strip() == "scores[:i, memo_ind] = 0"
assert linecache.getline(QD, 273).strip() == "return bboxes, labels, ids"


def run_oc(shipped, data129=False):
    if data129:  # :128 through .data (the same speed kept, no version bump), :129 as shipped
        replace = {128: "speed.data[:, :, 0] /= norm.detach()"}
    else:  # :129 out of place; :128 as shipped or out of place
        replace = {129: "speed = torch.stack([speed[:, :, 0], speed[:, :, 1] / norm], -1)"}
        if not shipped:
            replace[128] = "speed = torch.stack([speed[:, :, 0] / norm, speed[:, :, 1]], -1)"
    ns = compile_alone(OC, {"OCSORTTracker.vel_direction_batch"}, {"torch": torch}, replace=replace)

    def go():
        torch.manual_seed(0)
        b = torch.rand(3, 4, requires_grad=True)
        b2 = torch.rand(4, 4)
        ns["vel_direction_batch"](None, b * 10, b2 * 10).sum().backward()
        assert b.grad is not None
    return go


def iou(a, b):
    lt = torch.max(a[:, None, :2], b[None, :, :2])
    rb = torch.min(a[:, None, 2:], b[None, :, 2:])
    inter = (rb - lt).clamp(min=0).prod(-1)
    area = lambda x: (x[:, 2] - x[:, 0]) * (x[:, 3] - x[:, 1])
    return inter / (area(a)[:, None] + area(b)[None, :] - inter)


def run_qd(replace=None, with_conf=False):
    ns = compile_alone(QD, {"QuasiDenseTracker.track"}, {"torch": torch, "F": F, "bbox_overlaps": iou},
                       replace=replace or {})

    def go():
        torch.manual_seed(0)
        head = torch.nn.Linear(4, 8)
        store = {}
        me = types.SimpleNamespace(
            nms_backdrop_iou_thr=0.3, nms_class_iou_thr=0.7, obj_score_thr=0.3, match_score_thr=0.1,
            nms_conf_thr=0.5, init_score_thr=0.8, with_cats=True, match_metric="softmax", num_tracks=3, empty=False,
            memo=(torch.tensor([[0., 0, 10, 10], [20, 20, 30, 30], [40, 40, 50, 50]]), torch.tensor([0, 0, 1]),
                  torch.randn(3, 8), torch.tensor([0, 1, 2]), torch.zeros(3, 4)),
            update=lambda ids, bboxes, embeds, labels, frame_id: store.update(embeds=embeds))
        model = types.SimpleNamespace(track_head=types.SimpleNamespace(
            extract_bbox_feats=lambda feats, boxes: head(boxes[0] / 50)))
        bboxes = torch.tensor([[1., 1, 11, 11, 0.9], [21, 19, 31, 29, 0.85], [41, 41, 49, 52, 0.7]])
        out = ns["track"](me, [{"scale_factor": [1.0, 1.0, 1.0, 1.0]}], None, model, bboxes,
                          torch.tensor([0, 0, 1]), 5)
        assert 0 <= int(out[2][0]) < 3, out[2]  # the first box matched a memo track (the writes ran)
        loss = store["embeds"].sum()
        if with_conf:
            loss = loss + out[3]
        loss.backward()
        assert head.weight.grad is not None
    return go


FID = "mmtrack/models/trackers/ocsort_tracker.py:128:IPF104"
attempt(FID, "path", "vel_direction_batch(boxes1, boxes2), boxes that require grad (:129 out of place): `speed[:, :, 0] "
        "/= norm` spoils the columns the pows saved, backward of the directions raises", run_oc(True))
attempt(FID, "control", "both columns out of place: runs", run_oc(False))
attempt(FID, "context", ":128 through .data, :129 as shipped: raises (a miss)", run_oc(True, data129=True))
QDID = "mmtrack/models/trackers/quasi_dense_tracker.py"
CONF = {273: "return bboxes, labels, ids, conf"}
for n, code in ((248, "IPF101"), (259, "IPF104")):
    fid = f"{QDID}:{n}:{code}"
    attempt(fid, "path", "QuasiDenseTracker.track (softmax matching, with_cats) of three boxes against a memo of three "
            "tracks, a track head whose weights require grad: both writes run (the first box matched), backward "
            "of the stored embeddings runs", run_qd())
    attempt(fid, "context", "the last matched confidence returned too (not as shipped): backward reaches the softmax "
            "and raises", run_qd(CONF, with_conf=True))
    other = {248: "scores = scores * cat_same.float().to(scores.device)",
             259: "scores = scores.clone(); scores[:i, memo_ind] = 0",
             260: "scores = scores.clone(); scores[i + 1:, memo_ind] = 0"}
    attempt(fid, "control", "the confidence returned, both writes (and the unflagged :260) on fresh copies: runs",
            run_qd({**CONF, **other}, with_conf=True))
