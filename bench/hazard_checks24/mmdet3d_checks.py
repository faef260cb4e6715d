"""mmdet3d 1.4.0: the eleven proven findings of `inplacefix check` on main d1b4fd6 (stop 51, label51c). mmdet3d's
imports (mmcv, mmdet, mmengine, spconv) are not met. Stand-ins and what runs:
- `rotation_3d_in_axis` and `points_img2cam` are compiled alone from structures/bbox_3d/utils.py with the shipped
  `array_converter` (utils/array_converter.py loaded from its file; it passes tensors through unchanged).
- bbox heads' `_get_target_single` (parta2 :456/:468, point_rcnn :443/:455, pv_rcnn :331/:343): the method is
  compiled alone (annotations dropped), self a namespace whose bbox_coder.encode(a, b) is `b - a`, cfg
  cls_pos_thr 0.75 / cls_neg_thr 0.25; pos_bboxes (the RoIs) requiring grad, backward from bbox_targets. The
  rotation's einsum saves the view `pos_gt_bboxes_ct[..., 0:3]` (for the rotation matrix's gradient, which comes
  from roi_ry), then `pos_gt_bboxes_ct[..., 0:3] = rotation_3d_in_axis(...)` writes it (first finding) and
  `pos_gt_bboxes_ct[..., 6] = ry_label` writes the same tensor again (second finding). Each is isolated: the other
  write out of place (torch.cat), or for the second, the rotation kept as a read (its result added to the loss)
  instead of written back. Controls: the flagged write out of place.
- structures/points/base_points.py:190 (`BasePoints.rotate`) and structures/bbox_3d/cam_box3d.py:223
  (`CameraInstance3DBoxes.rotate`, `self.tensor[:, 6] += angle` after the rotation's einsum saved
  `self.tensor[:, 0:3]`; isolated from the tuple write at line 211 as above): the method compiled alone, self a
  namespace holding `tensor`; the rotation angle a one-element 1-D tensor requiring grad (a 0-dim one requiring
  grad stops with a TypeError in `torch.full`, rotation_3d_in_axis line 65; floats and grad-free tensors pass).
- pgd_head.py:1042/1045 (`_predict_by_feat_single`, depth fusion): lines 1041-1045 replayed from the file with
  `self.fuse_lambda = nn.Parameter(torch.tensor(10e-5))` (as __init__ line 151 builds it), bbox_pred3d and
  prob_depth_pred plain; `sig_alpha * bbox_pred3d[:, 2]` saves the view for fuse_lambda's gradient, line 1042
  writes it in the same statement, 1045 writes `bbox_pred3d[:, :3]` (isolated: line 1042 as a read). fuse_lambda
  always requires grad; mmdet3d predicts under no_grad in its test loop, so raising needs predict with grad on.
- vote_fusion.py:132: lines 131-133 replayed (`ray_angle**2` saves ray_angle, then `ray_angle /= ...`), ray_angle
  from seeds requiring grad.
Context (all): mmdet3d's own training hands the target code RoIs and ground truth, the rotate methods boxes and
angles, without grad; real by this file's convention (an input requiring grad raises) unless said otherwise."""

import _shim  # noqa: F401
import ast
import importlib.util
import linecache
import os
import textwrap
import types
import typing

import numpy as np
import torch
from torch import Tensor, nn
from _check import attempt
from _prec51b import PK2, _replace

ROOT = os.path.join(PK2, "mmdet3d")
UTILS = os.path.join(ROOT, "structures/bbox_3d/utils.py")
_spec = importlib.util.spec_from_file_location("_ac", os.path.join(ROOT, "utils/array_converter.py"))
AC = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(AC)
EXTRA = []


def base_ns():
    ns = {"torch": torch, "np": np, "Tensor": Tensor, "nn": nn, "array_converter": AC.array_converter,
          "_extra": EXTRA, "warning": print}
    ns.update({k: getattr(typing, k) for k in ("Union", "Tuple", "Optional", "List", "Dict")})
    tree = ast.parse(open(UTILS).read(), UTILS)
    body = [n for n in tree.body if getattr(n, "name", None) in ("rotation_3d_in_axis", "points_img2cam")]
    exec(compile(ast.Module(body=body, type_ignores=[]), UTILS, "exec"), ns)
    return ns


def method_alone(path, cls, meth, replace=None):
    """The method `cls.meth` of `path` as a plain function (decorators and annotations dropped), with
    {line: code} statements replaced."""
    tree = ast.parse(open(path).read(), path)
    for line, code in (replace or {}).items():
        _replace(tree, line, code)
    c = next(n for n in tree.body if getattr(n, "name", None) == cls)
    f = next(n for n in c.body if getattr(n, "name", None) == meth)
    f.decorator_list, f.returns = [], None
    for a in f.args.args + f.args.kwonlyargs:
        a.annotation = None
    ns = base_ns()
    exec(compile(ast.Module(body=[f], type_ignores=[]), path, "exec"), ns)
    return ns[meth]


def rhs(path, line):
    node = next(n for n in ast.walk(ast.parse(open(path).read())) if isinstance(n, ast.Assign) and n.lineno == line)
    return ast.unparse(node.value)


# ---- bbox heads' _get_target_single
HEADS = {"parta2_bbox_head.py": ("PartA2BboxHead", 456, 468), "point_rcnn_bbox_head.py": ("PointRCNNBboxHead", 443, 455),
         "pv_rcnn_bbox_head.py": ("PVRCNNBBoxHead", 331, 343)}


def target_run(fname, replace):
    def go():
        path = os.path.join(ROOT, "models/roi_heads/bbox_heads", fname)
        fn = method_alone(path, HEADS[fname][0], "_get_target_single", replace)
        EXTRA.clear()
        torch.manual_seed(0)
        pos_bboxes = (torch.rand(4, 7) * 4).requires_grad_()
        pos_gt = pos_bboxes.detach() + torch.rand(4, 7) * 0.2
        ious = torch.tensor([0.9, 0.8, 0.5, 0.1])
        me = types.SimpleNamespace(bbox_coder=types.SimpleNamespace(encode=lambda a, b: b - a))
        cfg = types.SimpleNamespace(cls_pos_thr=0.75, cls_neg_thr=0.25)
        out = fn(me, pos_bboxes, pos_gt, ious, cfg)
        (out[1].sum() + sum(t.sum() for t in EXTRA)).backward()
    return go


for fname, (cls, first, second) in HEADS.items():
    path = os.path.join(ROOT, "models/roi_heads/bbox_heads", fname)
    assert linecache.getline(path, first).strip() == "pos_gt_bboxes_ct[..., 0:3] = rotation_3d_in_axis("
    assert linecache.getline(path, second).strip() == "pos_gt_bboxes_ct[..., 6] = ry_label"
    rot = rhs(path, first)
    cat_first = f"pos_gt_bboxes_ct = torch.cat(({rot}, pos_gt_bboxes_ct[..., 3:]), -1)"
    read_first = f"_extra.append({rot})"
    cat_second = "pos_gt_bboxes_ct = torch.cat((pos_gt_bboxes_ct[..., :6], ry_label[..., None]), -1)"
    rel = f"mmdet3d/models/roi_heads/bbox_heads/{fname}"
    attempt(f"{rel}:{first}:IPF104", "path", f"_get_target_single, RoIs requiring grad, line {second} out of place",
            target_run(fname, {second: cat_second}))
    attempt(f"{rel}:{first}:IPF104", "path", "_get_target_single as shipped", target_run(fname, {}))
    attempt(f"{rel}:{first}:IPF104", "control", f"lines {first} and {second} out of place",
            target_run(fname, {first: cat_first, second: cat_second}))
    attempt(f"{rel}:{second}:IPF104", "path", f"line {first} kept as a read (rotation result added to the loss)",
            target_run(fname, {first: read_first}))
    attempt(f"{rel}:{second}:IPF104", "control", f"as the path, line {second} out of place",
            target_run(fname, {first: read_first, second: cat_second}))


# ---- rotate methods
BP = os.path.join(ROOT, "structures/points/base_points.py")
CB = os.path.join(ROOT, "structures/bbox_3d/cam_box3d.py")
assert linecache.getline(BP, 190).strip() == "self.tensor[:, :3] = rotated_points.squeeze(0)"
assert linecache.getline(CB, 223).strip() == "self.tensor[:, 6] += angle"
assert linecache.getline(CB, 211).strip() == "self.tensor[:, 0:3], rot_mat_T = rotation_3d_in_axis("


def rotate_run(path, cls, width, replace, axis_attr):
    def go():
        fn = method_alone(path, cls, "rotate", replace)
        EXTRA.clear()
        torch.manual_seed(0)
        me = types.SimpleNamespace(tensor=torch.rand(5, width), rotation_axis=2, YAW_AXIS=1)
        angle = torch.tensor([0.3], requires_grad=True)  # a 0-dim one requiring grad fails in torch.full (line 65)
        fn(me, angle)
        (me.tensor.sum() + sum(t.sum() for t in EXTRA)).backward()
    return go


attempt("mmdet3d/structures/points/base_points.py:190:IPF104", "path", "BasePoints.rotate(angle requiring grad)",
        rotate_run(BP, "BasePoints", 4, {}, "rotation_axis"))
attempt("mmdet3d/structures/points/base_points.py:190:IPF104", "control", "line 190 out of place (torch.cat)",
        rotate_run(BP, "BasePoints", 4, {190: "self.tensor = torch.cat((rotated_points.squeeze(0), self.tensor[:, 3:]), 1)"},
                   "rotation_axis"))
READ211 = ("_r = rotation_3d_in_axis(self.tensor[:, 0:3], angle, axis=self.YAW_AXIS, return_mat=True)\n"
           "_extra.append(_r[0])\nrot_mat_T = _r[1]")
attempt("mmdet3d/structures/bbox_3d/cam_box3d.py:223:IPF104", "path", "CameraInstance3DBoxes.rotate(angle requiring grad)"
        " as shipped", rotate_run(CB, "CameraInstance3DBoxes", 7, {}, "YAW_AXIS"))
attempt("mmdet3d/structures/bbox_3d/cam_box3d.py:223:IPF104", "path", "line 211 as a read (result added to the loss)",
        rotate_run(CB, "CameraInstance3DBoxes", 7, {211: READ211}, "YAW_AXIS"))
attempt("mmdet3d/structures/bbox_3d/cam_box3d.py:223:IPF104", "control", "as the path, line 223 out of place",
        rotate_run(CB, "CameraInstance3DBoxes", 7, {211: READ211, 223: "self.tensor = torch.cat((self.tensor[:, :6],"
                   " (self.tensor[:, 6] + angle)[:, None]), 1)"}, "YAW_AXIS"))


# ---- pgd_head depth fusion, lines 1041-1045 replayed
PGD = os.path.join(ROOT, "models/dense_heads/pgd_head.py")
assert linecache.getline(PGD, 1041).strip() == "sig_alpha = torch.sigmoid(self.fuse_lambda)"
assert linecache.getline(PGD, 1042).strip() == "bbox_pred3d[:, 2] = sig_alpha * bbox_pred3d[:, 2] + \\"
assert linecache.getline(PGD, 1045).strip() == "bbox_pred3d[:, :3] = points_img2cam(bbox_pred3d[:, :3], view)"


def pgd_run(last, subs):
    """Lines 1041..last of pgd_head.py, with {first line: (lines replaced, code)}; 1041-1043 sit one level deeper
    (under `if self.use_depth_classifier:`) than 1044-1045, so the two groups are dedented apart."""
    def go():
        groups, n = [[], []], 1041
        while n <= last:
            g = groups[0 if n < 1044 else 1]
            if n in subs:
                k, code = subs[n]
                g.append(code + "\n")
                n += k
            else:
                g.append(textwrap.dedent("".join(linecache.getline(PGD, m) for m in range(n, n + (2 if n == 1042 else 1)))))
                n += 2 if n == 1042 else 1
        src = textwrap.dedent("".join(groups[0])) + textwrap.dedent("".join(groups[1]))
        ns = base_ns()
        torch.manual_seed(0)
        ns.update(self=types.SimpleNamespace(fuse_lambda=nn.Parameter(torch.tensor(10e-5))),
                  bbox_pred3d=torch.rand(5, 7) * 10 + 1, prob_depth_pred=torch.rand(5) * 10 + 1,
                  view=torch.tensor([[700., 0., 600.], [0., 700., 180.], [0., 0., 1.]]))
        exec(compile(src, PGD, "exec"), ns)
        loss = ns["bbox_pred3d"].sum() + ns.get("depth", torch.zeros(())).sum()
        loss = loss + (ns["pred_center2d"].sum() if "pred_center2d" in ns else 0)
        loss.backward()
    return go


CAT1042 = ("bbox_pred3d = torch.cat((bbox_pred3d[:, :2], (sig_alpha * bbox_pred3d[:, 2] + (1 - sig_alpha) * "
           "prob_depth_pred)[:, None], bbox_pred3d[:, 3:]), 1)")
READ1042 = "depth = sig_alpha * bbox_pred3d[:, 2] + (1 - sig_alpha) * prob_depth_pred"
CAT1045 = "bbox_pred3d = torch.cat((points_img2cam(bbox_pred3d[:, :3], view), bbox_pred3d[:, 3:]), 1)"
F1042, F1045 = "mmdet3d/models/dense_heads/pgd_head.py:1042:IPF104", "mmdet3d/models/dense_heads/pgd_head.py:1045:IPF104"
attempt(F1042, "path", "lines 1041-1043 replayed, fuse_lambda a Parameter, backward", pgd_run(1043, {}))
attempt(F1042, "control", "line 1042 out of place (torch.cat)", pgd_run(1043, {1042: (2, CAT1042)}))
attempt(F1045, "path", "lines 1041-1045 as shipped", pgd_run(1045, {}))
attempt(F1045, "path", "line 1042 as a read (`depth = ...`, added to the loss), 1044-1045 as shipped",
        pgd_run(1045, {1042: (2, READ1042)}))
attempt(F1045, "control", "as the path, line 1045 out of place", pgd_run(1045, {1042: (2, READ1042), 1045: (1, CAT1045)}))


# ---- vote_fusion ray angle, lines 131-133 replayed
VF = os.path.join(ROOT, "models/layers/fusion_layers/vote_fusion.py")
assert linecache.getline(VF, 132).strip() == "ray_angle /= torch.sqrt(torch.sum(ray_angle**2, -1) +"


def vote_run(control):
    def go():
        src = textwrap.dedent("".join(linecache.getline(VF, n) for n in range(131, 134)))
        if control:
            src = src.replace("ray_angle /= torch.sqrt(", "ray_angle = ray_angle / torch.sqrt(")
        torch.manual_seed(0)
        seeds = torch.rand(6, 3, requires_grad=True)
        ns = {"torch": torch, "EPS": 1e-6, "seed_3d_expanded": seeds.repeat(2, 1), "imvote": torch.rand(12, 3)}
        exec(compile(src, VF, "exec"), ns)
        ns["ray_angle"].sum().backward()
    return go


attempt("mmdet3d/models/layers/fusion_layers/vote_fusion.py:132:IPF101", "path", "lines 131-133, seeds requiring grad",
        vote_run(False))
attempt("mmdet3d/models/layers/fusion_layers/vote_fusion.py:132:IPF101", "control", "line 132 out of place", vote_run(True))
