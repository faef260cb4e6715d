# source: own knowledge (Glow/RealNVP additive coupling: halves from a helper module of another file, the second half shifted in place);
# runs with p06helpers_thops.py. Written after the change, not tuned to it.
# error: A (one of the variables needed for gradient computation has been modified by an inplace operation: z1, saved by the conv, shares z's version counter)
import torch
import torch.nn as nn

from p06helpers_thops import cat_feature, split_feature


class AdditiveCoupling(nn.Module):
    def __init__(self, channels=4):
        super().__init__()
        self.actnorm = nn.Conv2d(channels, channels, 1)
        self.f = nn.Sequential(nn.Conv2d(channels // 2, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, channels // 2, 3, padding=1))

    def forward(self, x):
        z = self.actnorm(x)
        z1, z2 = split_feature(z, "split")
        z2 += self.f(z1)
        return cat_feature(z1, z2)


def main():
    torch.manual_seed(0)
    m = AdditiveCoupling()
    out = m(torch.randn(2, 4, 6, 6)).pow(2).sum()
    out.backward()
    return [out.detach(), m.actnorm.weight.grad]
