"""kappamodules 0.1.112 (kappamodules/diffaug/gaussian_blur.py:23 `gaussian_blur`): the proven finding of
`inplacefix check` (stop 55, fresh55, end of stop). `f /= f.sum()` writes `f`, the output of `exp2` (:22), which
exp2 saved. `f` is built from `torch.arange(...).div(sigma)`, so it requires grad only when `sigma` does:
`GaussianBlur(sigma)` keeps sigma as handed (a number in the library's augmentations), and a 0-d sigma that
requires grad (a learned blur width) makes backward raise: real by this file's convention (an input that requires
grad). `gaussian_blur` is compiled alone from the shipped file, with a stand-in for the one `einops.repeat` pattern
it uses."""

import _shim  # noqa: F401
import linecache
import types

import torch
import torch.nn.functional as F
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("kappamodules/diffaug/gaussian_blur.py")
assert linecache.getline(PATH, 23).strip() == "f /= f.sum()"


def repeat(t, pattern, c):
    assert pattern == "f -> c 1 f"
    return t.view(1, 1, -1).expand(c, 1, -1)


def run(control=False, grad_sigma=True):
    replace = {23: "f = f / f.sum()"} if control else {}
    ns = compile_alone(PATH, {"gaussian_blur"},
                       {"torch": torch, "F": F, "einops": types.SimpleNamespace(repeat=repeat)}, replace=replace)

    def go():
        x = torch.rand(2, 3, 16, 16, requires_grad=True)
        sigma = torch.tensor(1.5, requires_grad=grad_sigma)
        ns["gaussian_blur"](x, sigma).square().sum().backward()
    return go


FID = "kappamodules/diffaug/gaussian_blur.py:23:IPF101"
attempt(FID, "path", "gaussian_blur on images that require grad with a 0-d sigma that requires grad: raises", run())
attempt(FID, "control", "the same with :23 out of place: runs", run(control=True))
attempt(FID, "context", "sigma a tensor without grad (as the augmentation hands it): runs", run(grad_sigma=False))
