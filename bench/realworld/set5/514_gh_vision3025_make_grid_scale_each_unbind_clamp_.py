# source: https://github.com/pytorch/vision/issues/3025 (also filed as pytorch/pytorch#48149; same failure from
# user code in VITA-Group/AutoGAN#21)
# pattern: inplace_method
# codemod_fixable: yes
# error: C
# ref_semantics: same
# Visualising conv kernels during training: kernel_idx = kernels[o_idx, :, :, :].unsqueeze(1) keeps the graph of
# the conv weight, and torchvision's make_grid(normalize=True, scale_each=True) clones it and then runs
# `for t in tensor: norm_range(t, range)` whose norm_ip() does img.clamp_(...) / img.add_(...).div_(...) on
# the unbind() views -> "Output 0 of UnbindBackward0 is a view and is being modified inplace".
# torchvision's fix: make_grid (and save_image) are decorated with @torch.no_grad(), so the grid is built
# without autograd (514helpers_vutils_fixed.py); the grid values are unchanged.
# The 0.8 make_grid is in 514helpers_vutils.py; AlexNet is replaced by a two-conv net that takes one training
# step before its kernels are visualised.
import importlib.util
import os

import torch
import torch.nn as nn


def _load(name):
    spec = importlib.util.spec_from_file_location(
        "vutils", os.path.join(os.path.dirname(os.path.abspath(__file__)), name))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


vutils = _load("514helpers_vutils.py")


def compute():
    torch.manual_seed(0)
    alexnet = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Conv2d(4, 2, 3), nn.ReLU(),
                            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2, 3))
    optimizer = torch.optim.SGD(alexnet.parameters(), lr=0.1)
    loss = nn.functional.cross_entropy(alexnet(torch.randn(2, 3, 8, 8)), torch.tensor([0, 2]))
    optimizer.zero_grad()
    loss.backward()
    out = {"grad." + n: p.grad.clone() for n, p in alexnet.named_parameters()}
    optimizer.step()

    grids = []
    for sub_module in alexnet.modules():
        if isinstance(sub_module, nn.Conv2d):
            kernels = sub_module.weight
            c_out, c_int, k_w, k_h = tuple(kernels.shape)
            for o_idx in range(c_out):
                kernel_idx = kernels[o_idx, :, :, :].unsqueeze(1)  # kernel_idx.grad_fn == UnsqueezeBackward0
                img_grid = vutils.make_grid(kernel_idx, normalize=True, scale_each=True, nrow=3)
                grids.append(img_grid.detach().flatten())
    out["grids"] = torch.cat(grids)
    return out


if __name__ == "__main__":
    compute()
