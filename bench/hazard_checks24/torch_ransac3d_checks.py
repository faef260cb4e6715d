"""torch-ransac3d 2.0.0 (torch_ransac3d/util.py:130 `estimate_normals`): the proven finding of `inplacefix check`
(stop 54, fresh54b, end of stop). `normals = eigenvectors[:, :, 0]` is a view of `torch.linalg.eigh`'s eigenvectors,
which autograd saves for eigh's backward, and `normals[flip_mask] = -normals[flip_mask]` writes into it (so does the
product of :129, which saved `normals`). The library estimates normals of point clouds it fits (no grad): real by
this file's convention (points that require grad). `estimate_normals` and `knn_pytorch` are compiled alone from the
shipped file."""

import _shim  # noqa: F401
import linecache

import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("torch_ransac3d/util.py")
assert linecache.getline(PATH, 130).strip() == "normals[flip_mask] = -normals[flip_mask]"


def run(control=False):
    replace = {130: "normals = torch.where(flip_mask.unsqueeze(1), -normals, normals)"} if control else {}
    ns = compile_alone(PATH, {"estimate_normals", "knn_pytorch"}, {"torch": torch, "Optional": None},
                       replace=replace)

    def go():
        torch.manual_seed(0)
        pts = (torch.rand(30, 3, dtype=torch.float64) - 0.5).requires_grad_(True)
        ns["estimate_normals"](pts, k=6).sum().backward()
    return go


FID = "torch_ransac3d/util.py:130:IPF104"
attempt(FID, "path", "estimate_normals on 30 points that require grad: raises", run())
attempt(FID, "control", "the same with :130 out of place (torch.where): runs", run(control=True))
