"""mmagic 1.2.0: the two proven findings of `inplacefix check` on main e3574f0 (stop 49, prec49).
mmagic's modules import mmengine and mmcv at the top (not installed here), so the driver compiles
each flagged function alone from the unpacked wheel (ast, line numbers kept; MMAGIC_SRC, the folder
holding `mmagic/`, default /work/tmp/prec49/site4: `pip download --no-deps mmagic==1.2.0`, unzip).

- models/editors/real_basicvsr/real_basicvsr_net.py:83 (IPF104) `lqs[:, i, :, :, :] += residue_i`
  where `residue_i = self.image_cleaning(lqs[:, i, :, :, :])` (line 82): the cleaning module's first
  layer is an `nn.Conv2d`, which saves its input (a view of `lqs`) when its weight requires grad.
  Only with `is_sequential_cleaning=True` (documented: "to save GPU memory"; default False). The path:
  `RealBasicVSRNet.forward` compiled alone, `image_cleaning` a real Conv2d-LeakyReLU-Conv2d stack
  (ResidualBlocksWithInputConv starts with `nn.Conv2d(in, mid, 3, 1, 1)`) with weights requiring grad
  (training, is_fix_cleaning=False, the default), `basicvsr` a Conv3d standing for BasicVSRNet, a batch
  of frames not requiring grad, backward: raises. Control: the same with line 83 out of place
  (`lqs = lqs.clone(); lqs[:, i] += residue_i`, one line): runs. Context: is_fix_cleaning=True
  (cleaning weights frozen: the Conv2d saves nothing for them, frames need no grad): runs; the
  default batch arm (is_sequential_cleaning=False): runs. Real (in training with the documented option).
- evaluation/metrics/swd.py:180 (IPF101) `desc /= torch.std(desc, dim=(0, 2, 3), keepdim=True)`
  in `finalize_descriptors`: std saves its input. The path: finalize_descriptors([descriptors computed
  from a tensor requiring grad]), backward: raises; control out of place runs; context: the SWD metric
  computes descriptors from images in evaluation (no grad), where it runs. Real by this file's
  convention (an input requiring grad raises); the library's own use runs."""

import _shim  # noqa: F401
import ast
import os
import types

import torch
from _check import attempt, expect_line
from _rewrite import rewritten
from torch import nn

SRC = os.path.join(os.environ.get("MMAGIC_SRC", "/work/tmp/prec49/site4"), "mmagic")


def load(relpath, qualname, namespace):
    path = os.path.join(SRC, relpath)
    body = ast.parse(open(path).read(), path).body
    *owners, name = qualname.split(".")
    for owner in owners:
        body = next(n for n in body if isinstance(n, ast.ClassDef) and n.name == owner).body
    fn = next(n for n in body if isinstance(n, ast.FunctionDef) and n.name == name)
    exec(compile(ast.Module(body=[fn], type_ignores=[]), path, "exec"), namespace)
    return namespace[name]


# real_basicvsr_net.py:83 -------------------------------------------------------------------------
forward = load("models/editors/real_basicvsr/real_basicvsr_net.py", "RealBasicVSRNet.forward", {"torch": torch})
expect_line(forward, 82, "residue_i = self.image_cleaning(lqs[:, i, :, :, :])")
expect_line(forward, 83, "lqs[:, i, :, :, :] += residue_i")
F83 = "mmagic/models/editors/real_basicvsr/real_basicvsr_net.py:83:IPF104"


def realbasicvsr(sequential=True, fix_cleaning=False, edits=()):
    def run():
        torch.manual_seed(0)
        mid = 8
        cleaning = nn.Sequential(nn.Conv2d(3, mid, 3, 1, 1), nn.LeakyReLU(0.1, inplace=True), nn.Conv2d(mid, 3, 3, 1, 1))
        if fix_cleaning:
            cleaning.requires_grad_(False)
        basicvsr = nn.Conv3d(3, 3, 3, 1, 1)
        self = types.SimpleNamespace(is_sequential_cleaning=sequential, image_cleaning=cleaning,
                                     dynamic_refine_thres=255 / 255.,
                                     basicvsr=lambda lqs: basicvsr(lqs.transpose(1, 2)).transpose(1, 2))
        lqs = torch.rand(2, 3, 3, 8, 8)  # n, t, c, h, w: data, no grad
        f = rewritten(forward, edits) if edits else forward
        f(self, lqs).pow(2).mean().backward()
        assert basicvsr.weight.grad is not None
    return run


attempt(F83, "path", "RealBasicVSRNet.forward, is_sequential_cleaning=True, cleaning weights requiring grad "
        "(training), backward", realbasicvsr())
attempt(F83, "control", "line 83 as `lqs = lqs.clone(); lqs[:, i, :, :, :] += residue_i`",
        realbasicvsr(edits=[("lqs[:, i, :, :, :] += residue_i", "lqs = lqs.clone(); lqs[:, i, :, :, :] += residue_i")]))
attempt(F83, "context", "is_fix_cleaning=True (cleaning weights frozen), sequential", realbasicvsr(fix_cleaning=True))
attempt(F83, "context", "is_sequential_cleaning=False (the default batch arm)", realbasicvsr(sequential=False))

# swd.py:180 -------------------------------------------------------------------------------------
finalize = load("evaluation/metrics/swd.py", "finalize_descriptors", {"torch": torch})
expect_line(finalize, 180, "desc /= torch.std(desc, dim=(0, 2, 3), keepdim=True)")
F180 = "mmagic/evaluation/metrics/swd.py:180:IPF101"


def swd(edits=(), grad=True):
    def run():
        torch.manual_seed(0)
        images = torch.rand(4, 3, 7, 7, requires_grad=grad)
        desc = [images * 2.0, images + 1.0]  # descriptors of one level, from images
        f = rewritten(finalize, edits) if edits else finalize
        out = f(desc)
        if grad:
            out.pow(2).sum().backward()
    return run


attempt(F180, "path", "finalize_descriptors([descriptors from images requiring grad]), backward", swd())
attempt(F180, "control", "line 180 out of place", swd([("desc /= torch.std(desc, dim=(0, 2, 3), keepdim=True)",
                                                       "desc = desc / torch.std(desc, dim=(0, 2, 3), keepdim=True)")]))
attempt(F180, "context", "evaluation: descriptors from images not requiring grad", swd(grad=False))
