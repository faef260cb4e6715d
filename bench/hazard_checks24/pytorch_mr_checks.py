"""pytorch-mr 0.0.1 (pytorch_mr/core.py:306 `AxisAng6`): the proven finding of `inplacefix check` (stop 58, fresh58,
end of stop). `theta = torch.linalg.norm(expc6[:, :3], dim=-1)` (:304; the vector norm saves its output) and then
`theta[mask] = torch.linalg.norm(expc6[mask, 3:], dim=-1)` (:306) writes it (the boolean-mask write bumps the version
even when no row is near zero): with exponential coordinates that require grad (the package is a differentiable port
of Modern Robotics; IK and trajectory optimisation differentiate through it), backward raises. Real by this file's
convention (coordinates that require grad). torch.where (out of place) runs. AxisAng6 is compiled alone with
_as_batch_vec and NearZero from the same file."""

import _shim  # noqa: F401
import linecache

import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("pytorch_mr/core.py")
assert linecache.getline(PATH, 306).strip() == "theta[mask] = torch.linalg.norm(expc6[mask, 3:], dim=-1)"


def run(shipped, pure_translation=False):
    replace = {} if shipped else {
        306: "theta = torch.where(mask, torch.linalg.norm(expc6[:, 3:], dim=-1), theta)"}
    ns = compile_alone(PATH, {"_as_batch_vec", "NearZero", "AxisAng6"}, {"torch": torch}, replace=replace)

    def go():
        torch.manual_seed(0)
        v = torch.randn(3, 6)
        if pure_translation:
            v[1, :3] = 0.0
        x = v.clone().requires_grad_(True)
        s, theta = ns["AxisAng6"](x * 1)
        (s.sum() + theta.sum()).backward()
        assert x.grad is not None
    return go


FID = "pytorch_mr/core.py:306:IPF104"
attempt(FID, "path", "AxisAng6(expc6) of three twists that require grad: the mask write spoils the norm's saved "
        "output, backward raises", run(True))
attempt(FID, "path", "the same with a pure translation among them (the mask selects it): raises",
        run(True, pure_translation=True))
attempt(FID, "control", "torch.where: runs", run(False))
