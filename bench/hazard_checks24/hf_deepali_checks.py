"""hf-deepali 0.6.5 (deepali/core/affine.py:59, :62, :66, :70, :72, :76 `affine_rotation_matrix`;
deepali/core/kernels.py:279, :281 `gaussian1d`): the proven findings of `inplacefix check` (stop 56, fresh56, end of
stop). Both functions are compiled alone from the shipped files (deepali's `as_tensor` as torch.as_tensor).

- affine.py: the Graphics-Gems decomposition works on `matrix = matrix[..., :3].clone()` and writes its columns
  back in place, while `torch.linalg.norm` of a column and the shear products (`matrix[..., 0].mul(...)`) saved
  views of it. An affine matrix that requires grad (the parameters of an affine registration being optimised),
  backward of the rotation: raises. Each line is isolated by writing the other five columns through `matrix.data`
  (the same tensor, no version bump; their values kept); the control writes all six so and runs.
- kernels.py:279, :281: `kernel = torch.exp(...)` (:274) is exp's saved output, and `kernel *= scale`,
  `kernel /= kernel.sum()` write it. A sigma that requires grad (a learned smoothing width), backward of the kernel:
  raises; each isolated by the other writing through `.data`, the control both so.

Real by this file's convention (inputs that require grad; the library's registration calls build kernels from
numbers and call the decomposition on fitted transforms)."""

import _shim  # noqa: F401
import linecache
import math

import torch
from torch import Tensor
from _check import attempt
from _fresh53 import compile_alone, src

AFF = src("deepali/core/affine.py")
KER = src("deepali/core/kernels.py")
COLS = {59: "matrix[..., 0] = matrix[..., 0].div(sx.unsqueeze(-1))",
        62: "matrix[..., 1] = matrix[..., 1].sub(matrix[..., 0].mul(tansxy.unsqueeze(-1)))",
        66: "matrix[..., 1] = matrix[..., 1].div(sy.unsqueeze(-1))",
        70: "matrix[..., 2] = matrix[..., 2].sub(matrix[..., 0].mul(tansxz.unsqueeze(-1)))",
        72: "matrix[..., 2] = matrix[..., 2].sub(matrix[..., 1].mul(tansyz.unsqueeze(-1)))",
        76: "matrix[..., 2] = matrix[..., 2].div(sz.unsqueeze(-1))"}
for n, text in COLS.items():
    assert linecache.getline(AFF, n).strip() == text, n
assert linecache.getline(KER, 279).strip() == "kernel *= scale"
assert linecache.getline(KER, 281).strip() == "kernel /= kernel.sum()"


def through_data(text):
    target, value = text.split(" = ", 1)
    return f"{target.replace('matrix', 'matrix.data', 1)} = ({value}).detach()"


def rotation(shipped):
    replace = {n: through_data(t) for n, t in COLS.items() if n != shipped}
    ns = compile_alone(AFF, {"affine_rotation_matrix"}, {"torch": torch, "Tensor": Tensor}, replace=replace)

    def go():
        torch.manual_seed(0)
        m = (torch.eye(3, 4) + 0.2 * torch.randn(3, 4)).requires_grad_(True)
        ns["affine_rotation_matrix"](m * 1.0).sum().backward()
        assert m.grad is not None
    return go


def kernel(replace):
    ns = compile_alone(KER, {"gaussian1d"}, {
        "torch": torch, "math": math, "Tensor": Tensor,
        "as_tensor": lambda x, dtype=None, device=None: torch.as_tensor(x, dtype=dtype, device=device)},
        replace=replace)

    def go():
        sigma = torch.tensor(1.5, requires_grad=True)
        ns["gaussian1d"](sigma * 1.0, radius=3).square().sum().backward()
        assert sigma.grad is not None
    return go


for n in COLS:
    FID = f"deepali/core/affine.py:{n}:IPF104"
    attempt(FID, "path", f"affine_rotation_matrix of a 3x4 affine that requires grad, :{n} as shipped, the other "
            "column writes through matrix.data: raises", rotation(n))
    attempt(FID, "control", "all six column writes through matrix.data: runs", rotation(None))
FID = "deepali/core/kernels.py:279:IPF101"
attempt(FID, "path", "gaussian1d(sigma, radius=3) with a sigma that requires grad, :281 through kernel.data: raises",
        kernel({281: "kernel.data /= kernel.sum().detach()"}))
attempt(FID, "control", "the same with :279 and :281 out of place: runs",
        kernel({279: "kernel = kernel * scale", 281: "kernel = kernel / kernel.sum()"}))
FID = "deepali/core/kernels.py:281:IPF101"
attempt(FID, "path", "the same with :279 through kernel.data: raises", kernel({279: "kernel.data *= scale.detach()"}))
attempt(FID, "control", "both through kernel.data: runs",
        kernel({279: "kernel.data *= scale.detach()", 281: "kernel.data /= kernel.sum().detach()"}))
