# reference fix for 409: the fix in utils/rigid_warping.py (409helpers_rigid_warping_fixed.py):
# `theta = theta + 1.0e-10`; the caller is unchanged.
import os
import sys
from importlib import import_module

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
rigid_warping = import_module("409helpers_rigid_warping_fixed")


class RigidBlurringKernel(nn.Module):
    def __init__(self, num_img, num_wide=16, num_motion=3, img_embed=8):
        super().__init__()
        self.num_motion = num_motion
        self.img_embed = nn.Embedding(num_img, img_embed)
        self.rot_mlp = nn.Sequential(nn.Linear(img_embed, num_wide), nn.ReLU(), nn.Linear(num_wide, 3 * num_motion))
        self.trans_mlp = nn.Sequential(nn.Linear(img_embed, num_wide), nn.ReLU(),
                                       nn.Linear(num_wide, 3 * num_motion))
        self.se3_field = rigid_warping.SE3Field()

    def forward(self, rays_o, img_idx):
        N = rays_o.shape[0]
        emb = self.img_embed(img_idx)
        rot = self.rot_mlp(emb).view(N, self.num_motion, 3)
        trans = self.trans_mlp(emb).view(N, self.num_motion, 3)
        warped = []
        for k in range(self.num_motion):
            warped.append(self.se3_field.warp(rays_o, rot[:, k], trans[:, k]))
        return torch.stack(warped, dim=1)  # N x num_motion x 3


def compute():
    torch.manual_seed(0)
    kernel = RigidBlurringKernel(num_img=4)
    rays_o = torch.randn(6, 3)
    img_idx = torch.randint(0, 4, (6,))
    warped = kernel(rays_o, img_idx)
    loss = (warped - rays_o[:, None]).pow(2).mean()
    loss.backward()
    return {n: p.grad for n, p in kernel.named_parameters()}


if __name__ == "__main__":
    compute()
