# reference fix for 615 (pytorch/vision PR #3269): make_grid under @torch.no_grad()
# (615helpers_torchvision_utils_fixed.py); the caller is unchanged.
import os
import sys
from importlib import import_module

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
vutils = import_module("615helpers_torchvision_utils_fixed")


def compute():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Conv2d(4, 2, 3), nn.AdaptiveAvgPool2d(1), nn.Flatten())
    x, y = torch.randn(2, 3, 8, 8), torch.tensor([0, 1])
    loss = nn.functional.cross_entropy(net(x), y)
    loss.backward()
    out = {n: p.grad for n, p in net.named_parameters()}

    grids = []
    for sub_module in net.modules():
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
