"""deepvisiontools 1.0.5: the two proven findings of `inplacefix check` (stop 55, fresh55, end of stop).

- metrics/engines.py:700 (`MAPEngine._ap_from_flags`): the precision envelope `mpre[i - 1] = torch.maximum(mpre[i - 1],
  mpre[i])` writes an element of `mpre` that the same line's `torch.maximum` saved (both its operands are views of
  mpre). `mpre` is built from the true-positive flags; `MAPEngine` hands them as uint8 (no grad), so it raises only
  with float flags that require grad (a soft, differentiable AP): real by this file's convention, the weak kind (as
  ksom's nb_gaussian).
- models/detectors/models/heads/heads.py:2753 (`CascadeMaskRCNNHead.forward`, PointRend subdivision at inference):
  `ref_flat.scatter_(dim=2, index=idx, src=point_logits)` writes `ref_flat`, a reshape (a view) of `refined`, which
  `grid_sample` (:2728) saved to sample the coarse logits at the points. In eval mode with grad on (mask logits from a
  mask head with parameters) backward of the refined mask logits raises: real by this file's convention (eval with
  grad on). `CascadeMaskRCNNHead.forward` is compiled alone with the box cascade's `super().forward(...)` (:2550)
  replaced by a stand-in output and the result (:2758) replaced by `return mask_logits`; its own
  `_sample_point_coords_uncertainty` and `_sample_fpn_features_at_points` are compiled from the shipped file; the
  mask pooler, mask head and point head are small stand-ins (a conv and a 1-d conv).
"""

import _shim  # noqa: F401
import linecache
import types

import torch
import torch.nn.functional as F
from _check import attempt
from _fresh53 import compile_alone, src

ENG = src("deepvisiontools/metrics/engines.py")
HEADS = src("deepvisiontools/models/detectors/models/heads/heads.py")
assert linecache.getline(ENG, 700).strip() == "mpre[i - 1] = torch.maximum(mpre[i - 1], mpre[i])"
assert linecache.getline(HEADS, 2753).strip() == "ref_flat.scatter_(dim=2, index=idx, src=point_logits)"
assert linecache.getline(HEADS, 2550).strip() == "out_box: RCNNOutput = super().forward("
assert linecache.getline(HEADS, 2758).strip() == "out = MaskRCNNOutput("


# --- engines.py:700
def ap(control=False, soft=True):
    replace = {700: "mpre = torch.cat([mpre[:i - 1], torch.maximum(mpre[i - 1], mpre[i]).view(1), mpre[i:]])"} \
        if control else {}
    ns = compile_alone(ENG, {"MAPEngine._ap_from_flags"}, {"torch": torch}, replace=replace)

    def go():
        scores = torch.rand(8).sort(descending=True).values
        if soft:
            flags = torch.rand(8, requires_grad=True)
        else:
            flags = (torch.rand(8) > 0.4).to(torch.uint8)
        out = ns["_ap_from_flags"](scores, flags, 5)
        if out.requires_grad:
            out.backward()
    return go


FID = "deepvisiontools/metrics/engines.py:700:IPF104"
attempt(FID, "path", "_ap_from_flags on float (soft) flags that require grad, 5 ground truths: raises", ap())
attempt(FID, "control", "the same with :700 out of place (the envelope rebuilt by cat): runs", ap(control=True))
attempt(FID, "context", "uint8 flags, as MAPEngine hands them: nothing to differentiate", ap(soft=False))


# --- heads.py:2753
def head(control=False, training=False):
    replace = {2550: "out_box = self._out_box", 2758: "return mask_logits"}
    if control:
        replace[2753] = "ref_flat = ref_flat.scatter(dim=2, index=idx, src=point_logits)"
    ns = compile_alone(HEADS, {"CascadeMaskRCNNHead.forward", "CascadeMaskRCNNHead._sample_point_coords_uncertainty",
                               "CascadeMaskRCNNHead._sample_fpn_features_at_points"}, {"torch": torch, "F": F},
                       replace=replace)

    def go():
        torch.manual_seed(0)
        mask_conv = torch.nn.Conv2d(8, 1, 1)
        point_head = torch.nn.Conv1d(8 + 1, 1, 1)
        props = [torch.tensor([[4.0, 4.0, 40.0, 40.0], [10.0, 8.0, 30.0, 50.0]])]
        me = types.SimpleNamespace(
            training=training, semantic_head=None, mask_class_agnostic=True, nc=3, mask_pool_size=7,
            mask_conv_dim=8, htc_interleaved_mask_enabled=False, mask_iou_head=None,
            pointrend_point_head=point_head, pointrend_subdivision_steps=2, pointrend_subdivision_num_points=20,
            pointrend_feature_level=0, strides=[4],
            _out_box=types.SimpleNamespace(stage_proposals=[props], proposals=props, image_sizes=[(64, 64)]),
            mask_pooler=lambda feats, p, sizes: torch.randn(2, 8, 14, 14),
            mask_head=lambda x, return_features: (mask_conv(x), x))
        me._sample_point_coords_uncertainty = ns["_sample_point_coords_uncertainty"]
        me._sample_fpn_features_at_points = ns["_sample_fpn_features_at_points"]
        mask_logits = ns["forward"](me, [torch.randn(1, 8, 16, 16)])
        mask_logits.sum().backward()
        assert point_head.weight.grad is not None
    return go


FID = "deepvisiontools/models/detectors/models/heads/heads.py:2753:IPF103"
attempt(FID, "path", "the head in eval mode with grad on, two RoIs, PointRend subdivision (2 steps, 20 points), "
        "backward of the refined mask logits: raises", head())
attempt(FID, "control", "the same with :2753 out of place: runs", head(control=True))
