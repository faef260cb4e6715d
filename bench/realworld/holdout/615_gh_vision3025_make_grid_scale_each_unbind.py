# source: https://github.com/pytorch/vision/issues/3025
# pattern: inplace_method
# codemod_fixable: yes
# error: C
# ref_semantics: same
# torchvision.utils.make_grid(normalize=True, scale_each=True) (615helpers_torchvision_utils.py, torchvision 0.8):
# visualising conv kernels of a model that requires grad, make_grid clones the tensor, iterates
# `for t in tensor` (unbind views) and normalises each image in place (`img.clamp_(...)`, `img.add_(-min).div_(...)`)
# -> "Output 0 of UnbindBackward is a view and is being modified inplace". Also filed as pytorch/pytorch#48149.
# Fixed in torchvision by PR #3269: @torch.no_grad() on make_grid and the other utilities.
# The reporter's loop over AlexNet's conv kernels is kept, on a small two-conv model that is trained for one step
# before its kernels are logged (AlexNet weights are not needed).
import os
import sys
from importlib import import_module

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
vutils = import_module("615helpers_torchvision_utils")


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
