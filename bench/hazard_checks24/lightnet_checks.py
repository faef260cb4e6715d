"""lightnet 4.0.0: the twelve proven findings of `inplacefix check` (stop 55, fresh55, end of stop), in the
post-processing transforms of lightnet/data/transform/post/. The classes' `forward` (or method) is compiled alone
from the shipped file with a stand-in self (the attributes its __init__ sets), `meshgrid_kw` as {"indexing": "ij"},
lightnet's `xyxy_cwh` compiled from lightnet/util/_coords.py, and stand-ins for `pd.DataFrame` and brambox's
`BoundingBoxTransformer`.

- _anchor_yolo.py:65, :66, :67 (`GetAnchorBoxes.forward`), _anchor_masked.py:61, :62, :63
  (`GetMaskedAnchorBoxes.forward`), _anchor_oriented.py:57, :58, :59, :60 (`GetOrientedAnchorBoxes.forward`): the
  first row's `sigmoid_()` (:64, :60, :56) saves its result, a view of the network output, and each later row's
  in-place chain writes the same tensor. A network output that requires grad (the transform applied with grad on,
  e.g. in eval without no_grad) makes backward of the returned boxes raise: real by this file's convention (eval
  with grad on). Each line is isolated by running the other flagged rows through `.data`; its control runs it
  through `.data` too.
- _corner.py:61 (`GetCornerBoxes.forward`, subsample_kernel set): `heatmaps *= ...` writes sigmoid's output, which
  sigmoid saved; the returned confidences come from those heatmaps: real by this file's convention. Isolated with
  :66 (`topk_idx %= (h * w)`) out of place: it writes the indices that `torch.topk` saved and raises on its own
  (unproven: a miss).
- _brambox.py:160 (`TensorToBrambox._transform_obb`): `boxes[:, 1] += ...` writes the boxes whose angle column
  `boxes[:, 5].sin()` saved, but the boxes are then handed on only as `boxes.detach().cpu().numpy()` (a pandas
  DataFrame): no backward reaches the sin's node. False (non-differentiable-sink, the `.detach()` form).
"""

import _shim  # noqa: F401
import linecache
import types

import torch
import torch.nn.functional as F
from torch import nn
from _check import attempt
from _fresh53 import compile_alone, src

D = "lightnet/data/transform/post/"
YOLO, MASKED, ORIENTED = src(D + "_anchor_yolo.py"), src(D + "_anchor_masked.py"), src(D + "_anchor_oriented.py")
CORNER, BRAMBOX, COORDS = src(D + "_corner.py"), src(D + "_brambox.py"), src("lightnet/util/_coords.py")
ANCHOR = {
    YOLO: ("GetAnchorBoxes", "network_output", (65, 66, 67)),
    MASKED: ("GetMaskedAnchorBoxes", "box_output", (61, 62, 63)),
    ORIENTED: ("GetOrientedAnchorBoxes", "network_output", (57, 58, 59, 60)),
}
SAVER = {YOLO: 64, MASKED: 60, ORIENTED: 56}  # the first row: `x[:, :, 0, :].sigmoid_()` and the rest of its chain
for path, (cls, var, lines) in ANCHOR.items():
    for n in lines:
        assert linecache.getline(path, n).strip().startswith(f"{var}[:, :, "), (path, n)
NS = {"torch": torch, "F": F, "nn": nn, "meshgrid_kw": {"indexing": "ij"}, "logging": None}


def anchor(path, shipped=(), control=False):
    cls, var, lines = ANCHOR[path]
    saver = SAVER[path]
    text = linecache.getline(path, saver).split("#")[0].strip()
    head, rest = text.split(".sigmoid_()", 1)
    # the saver row keeps its sigmoid_ (which saves the result) and runs the rest of its chain through .data (the
    # shipped chain writes that result at once: it raises on its own, a miss)
    replace = {saver: f"{head}.sigmoid_()\n{head.replace(var + '[', var + '.data[', 1)}{rest}"}
    for n in lines:
        if n not in shipped or control:
            text = linecache.getline(path, n).split("#")[0].strip()
            replace[n] = text.replace(f"{var}[", f"{var}.data[", 1)
    ns = compile_alone(path, {f"{cls}.forward"}, dict(NS), replace=replace)

    def go():
        torch.manual_seed(0)
        n_anchors = 2
        me = types.SimpleNamespace(conf_thresh=torch.tensor(0.0), network_stride=torch.tensor(8.0),
                                   num_anchors=n_anchors, coord_grid_sensitivity=1, max_angle=0.78)
        if path == ORIENTED:
            me.anchors = torch.tensor([[1.0, 2.0, 0.0], [2.0, 1.0, 0.3]])
            channels = n_anchors * (6 + 1)
        elif path == MASKED:
            me.anchors = torch.tensor([[1.0, 2.0], [2.0, 1.0]])
            me.num_masks = 3
            channels = n_anchors * (5 + 1 + 3)
        else:
            me.anchors = torch.tensor([[1.0, 2.0], [2.0, 1.0]])
            channels = n_anchors * (5 + 1)
        weight = torch.nn.Parameter(torch.randn(channels, 4, 1, 1))
        out = torch.nn.functional.conv2d(torch.randn(1, 4, 3, 3), weight)  # a head's output: requires grad
        boxes = ns["forward"](me, out)
        boxes.sum().backward()
        assert weight.grad is not None
    return go


for path, (cls, var, lines) in ANCHOR.items():
    for n in lines:
        FID = f"{D}{path.rsplit('/', 1)[1]}:{n}:IPF104"
        attempt(FID, "path", f"{cls}.forward on a head's output that requires grad (2 anchors, 1 class, threshold "
                f"0), :{n} as shipped and the other flagged rows through .data, backward of the boxes: raises",
                anchor(path, shipped=(n,)))
        attempt(FID, "control", f"the same with :{n} through .data too: runs", anchor(path, shipped=(n,),
                                                                                      control=True))


# --- _corner.py:61
assert linecache.getline(CORNER, 61).strip() == "heatmaps *= maxpool_heat.view(batch, 2, -1, h, w) == heatmaps"


def corner(control=False, shipped_66=False):
    replace = {} if shipped_66 else {66: "topk_idx = topk_idx % (h * w)"}  # :66 writes topk's saved indices (a miss)
    if control:
        replace[61] = "heatmaps = heatmaps * (maxpool_heat.view(batch, 2, -1, h, w) == heatmaps)"
    coords = compile_alone(COORDS, {"xyxy_cwh"}, {"torch": torch})
    ns = compile_alone(CORNER, {"GetCornerBoxes.forward"}, dict(NS, xyxy_cwh=coords["xyxy_cwh"]), replace=replace)

    def go():
        torch.manual_seed(0)
        me = types.SimpleNamespace(embedding_thresh=10.0, conf_thresh=0.0, network_stride=4, topk=5,
                                   subsample_kernel=3)
        weight = torch.nn.Parameter(torch.randn(2 * (1 + 3), 4, 1, 1))
        out = torch.nn.functional.conv2d(torch.randn(1, 4, 6, 6), weight)
        ns["forward"](me, out).sum().backward()
        assert weight.grad is not None
    return go


FID = D + "_corner.py:61:IPF101"
attempt(FID, "path", "GetCornerBoxes(subsample_kernel=3, topk 5).forward on a head's output that requires grad, "
        "backward of the boxes: raises", corner())
attempt(FID, "control", "the same with :61 out of place: runs", corner(control=True))
attempt(FID, "context", ":61 out of place and :66 as shipped: raises (topk's saved indices written)",
        corner(control=True, shipped_66=True))


# --- _brambox.py:160
assert linecache.getline(BRAMBOX, 160).strip() == "boxes[:, 1] += -h2*sin - w2*cos"
assert linecache.getline(BRAMBOX, 164).strip() == "boxes = boxes.detach().cpu().numpy()"


def brambox(undetached=False):
    replace = {164: "return boxes"} if undetached else {}
    ns = compile_alone(BRAMBOX, {"TensorToBrambox._transform_obb"},
                       {"torch": torch, "pd": types.SimpleNamespace(DataFrame=lambda data, columns: (data, columns)),
                        "bb": types.SimpleNamespace(util=types.SimpleNamespace(
                            BoundingBoxTransformer=lambda df: types.SimpleNamespace(get_poly=lambda buffer: df)))},
                       replace=replace)

    def go():
        weight = torch.randn(8, requires_grad=True)
        boxes = torch.rand(5, 8) * weight
        me = types.SimpleNamespace(class_label_map=None)
        out = ns["_transform_obb"](me, boxes)
        if isinstance(out, torch.Tensor):
            out.sum().backward()
        else:
            assert not hasattr(out[0], "requires_grad")  # a numpy array in a DataFrame
    return go


FID = D + "_brambox.py:160:IPF104"
attempt(FID, "path", "TensorToBrambox._transform_obb on oriented boxes that require grad: runs (the boxes leave as "
        "a detached numpy array; nothing to differentiate)", brambox())
attempt(FID, "context", "stopped before the detach (:164 `return boxes`), differentiating the boxes: raises",
        brambox(undetached=True))
