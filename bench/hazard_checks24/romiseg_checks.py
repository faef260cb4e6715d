"""romiseg 0.3.0 (romiseg/utils/vox_to_coord.py:352, 353, 354 `project_coordinates`): the proven findings of
`inplacefix check` (stop 55, fresh55, end of stop). `prod[:, 0, :] = prod[:, 0, :] / prod[:, 2, :]` (and the rows 1
and 2) writes rows of `prod` (the camera-frame coordinates, `ext.double() @ t`) that the same line's division saved
(its numerator and its divisor are rows of `prod`). Extrinsics or voxel coordinates that require grad (a camera pose
refined by gradient) make backward raise. romiseg builds its extrinsics from numbers (`get_trajectory`) and projects
voxel grids: real by this file's convention (an input that requires grad). `project_coordinates` is compiled alone
from the shipped file; each line is isolated by making the other two row writes go through `prod.data` (no version
bump); its control writes it through `prod.data` too."""

import _shim  # noqa: F401
import linecache

import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("romiseg/utils/vox_to_coord.py")
LINES = {
    352: "prod[:, 0, :] = prod[:, 0, :] / prod[:, 2, :]",
    353: "prod[:, 1, :] = prod[:, 1, :] / prod[:, 2, :]",
    354: "prod[:, 2, :] = prod[:, 2, :] / prod[:, 2, :]",
}
for n, text in LINES.items():
    assert linecache.getline(PATH, n).strip() == text, n


def run(shipped=(), grad_of="extrinsics"):
    replace = {n: text.replace("prod[", "prod.data[", 1) for n, text in LINES.items() if n not in shipped}
    ns = compile_alone(PATH, {"project_coordinates"}, {"torch": torch}, replace=replace)

    def go():
        voxels = torch.cat([torch.rand(5, 3), torch.zeros(5, 1)], 1).double()
        intr = torch.tensor([[100.0, 0, 32], [0, 100.0, 32], [0, 0, 1]])
        extr = torch.cat([torch.eye(3), torch.tensor([[0.0], [0.0], [5.0]])], 1).unsqueeze(0).repeat(2, 1, 1)
        extr = extr + 0.01 * torch.randn(2, 3, 4)
        if grad_of == "extrinsics":
            extr.requires_grad_()
        else:
            voxels.requires_grad_()
        xy = ns["project_coordinates"](voxels, intr, extr, False)
        xy.sum().backward()
    return go


for n in LINES:
    FID = f"romiseg/utils/vox_to_coord.py:{n}:IPF104"
    attempt(FID, "path", f"two cameras, extrinsics that require grad, :{n} as shipped and the other row writes "
            "through prod.data, backward of the projection: raises", run(shipped=(n,)))
    attempt(FID, "control", f"the same with :{n} through prod.data too: runs", run())
attempt("romiseg/utils/vox_to_coord.py:352:IPF104", "context", "as shipped, voxel coordinates that require grad: "
        "raises", run(shipped=tuple(LINES), grad_of="voxels"))
