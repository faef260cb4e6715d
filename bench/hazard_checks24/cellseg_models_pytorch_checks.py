"""cellseg-models-pytorch 0.2.0 (transforms/functional/omnipose.py:108, `smooth_distance`): the proven finding of
`inplacefix check` on main 7911fb7 (stop 53, fresh53). In the eikonal loop, `Tneigh = T[:, pty, ptx]` (pty, ptx
index tensors from torch.from_numpy: an advanced-index copy, not a view of T), `torch.minimum(Tneigh[...], ...)`
saves slices of that copy, and `T[:, pty[4, ...], ptx[4, ...]] = torch.sqrt(A * B + 1e-12)` writes T. Nothing
saved is written, and nothing requires grad anyway: smooth_distance takes an integer NumPy mask, builds T with
torch.zeros and returns `T.cpu().squeeze().numpy()`: false in every use. smooth_distance is compiled alone from
the shipped file; stand-in for scipy.ndimage.distance_transform_edt (used only for the iteration count: a
a brute-force Euclidean transform here)."""

import _shim  # noqa: F401
import linecache
import types

import numpy as np
import torch
from _check import attempt
from _fresh53 import compile_alone, src

SRC = src("cellseg_models_pytorch/transforms/functional/omnipose.py")
assert linecache.getline(SRC, 108).strip() == "T[:, pty[4, ...], ptx[4, ...]] = torch.sqrt(A * B + 1e-12)"
assert linecache.getline(SRC, 84).strip() == "T = torch.zeros((nimg, H, W), dtype=torch.double, device=device)"


def edt(mask):
    fg, bg = np.argwhere(mask > 0), np.argwhere(mask == 0)
    out = np.zeros(mask.shape)
    for y, x in fg:
        out[y, x] = np.sqrt(((bg - (y, x)) ** 2).sum(1)).min() if len(bg) else 1.0
    return out


MASK = np.zeros((10, 10), dtype=np.int32)
MASK[2:7, 2:8] = 1
MASK[7:9, 1:4] = 2


def run(replace, grad_t=False):
    def go():
        ns = compile_alone(SRC, {"smooth_distance"}, {"torch": torch, "np": np,
                                                      "ndi": types.SimpleNamespace(distance_transform_edt=edt)},
                           replace=replace)
        out = ns["smooth_distance"](MASK)
        if grad_t:
            out.sum().backward()
        else:
            assert isinstance(out, np.ndarray)  # nothing in it requires grad: no backward to run
    return go


F = "cellseg_models_pytorch/transforms/functional/omnipose.py:108:IPF104"
attempt(F, "path", "as shipped, grad on: an integer mask in, a NumPy array out, nothing requires grad", run({}))
attempt(F, "context", "T made to require grad (T = zeros + a scalar requiring grad), returned as a tensor, backward: "
        "runs, Tneigh is a copy",
        run({84: "T = torch.zeros((nimg, H, W), dtype=torch.double, device=device) + "
                 "torch.tensor(0.0, dtype=torch.double, requires_grad=True)",
             110: "return T"}, grad_t=True))
