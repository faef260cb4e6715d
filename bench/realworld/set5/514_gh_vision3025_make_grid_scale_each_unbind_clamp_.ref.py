# reference fix for 514 (torchvision): make_grid runs under @torch.no_grad(); see 514helpers_vutils_fixed.py.
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


vutils = _load("514helpers_vutils_fixed.py")


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
