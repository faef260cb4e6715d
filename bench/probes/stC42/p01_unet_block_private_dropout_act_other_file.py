# source: own knowledge (U-Net conv blocks of medical-imaging code: activation from a helper module,
# a private method choosing 2-D or 3-D dropout, both in place)
# error: A
# `self.act` comes from `get_act` in another file (every branch an in-place ReLU/LeakyReLU/ELU, each saving
# its result); `self.drop = self.__dropout()` is an in-place Dropout2d (or Dropout3d): it overwrites what
# the activation saved.
import torch
import torch.nn as nn

from p01helpers_acts import get_act


class ConvBlock(nn.Module):
    def __init__(self, cin, cout, activation="leaky", p=0.2, is_3d=False):
        super().__init__()
        self.p = p
        self.is_3d = is_3d
        conv = nn.Conv3d if is_3d else nn.Conv2d
        norm = nn.BatchNorm3d if is_3d else nn.BatchNorm2d
        self.conv = conv(cin, cout, 3, padding=1)
        self.norm = norm(cout)
        self.act = get_act(activation)
        self.drop = self.__dropout()

    def __dropout(self):
        return nn.Dropout2d(self.p, inplace=True) if self.is_3d is False else nn.Dropout3d(self.p, inplace=True)

    def forward(self, x):
        x = self.drop(self.act(self.norm(self.conv(x))))
        return x


class TinyUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = ConvBlock(1, 4)
        self.pool = nn.MaxPool2d(2)
        self.mid = ConvBlock(4, 4, activation="relu")
        self.up = nn.Upsample(scale_factor=2)
        self.out = nn.Conv2d(8, 1, 1)

    def forward(self, x):
        d = self.down(x)
        m = self.up(self.mid(self.pool(d)))
        return self.out(torch.cat([d, m], 1))


def compute():
    torch.manual_seed(0)
    net = TinyUNet()
    net(torch.randn(2, 1, 8, 8)).sum().backward()
    return [p.grad.sum().item() for p in net.parameters()]


if __name__ == "__main__":
    compute()
