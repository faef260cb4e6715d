# source: own knowledge (FPN necks built from a ConvBNAct block whose activation is per construction)
# error: A
# The lateral block is built with its activation (the default `with_act=True`): its output is ReLU's result,
# which `lat += up` overwrites; the other block is built without one.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvBNAct(nn.Module):
    def __init__(self, cin, cout, k, with_act=True):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, padding=k // 2, bias=False)
        self.bn = nn.BatchNorm2d(cout)
        self.act = nn.ReLU() if with_act else None

    def forward(self, x):
        x = self.bn(self.conv(x))
        if self.act is not None:
            x = self.act(x)
        return x


class TinyFPN(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.lateral = ConvBNAct(c, c, 1)
        self.top = ConvBNAct(c, c, 3, with_act=False)

    def forward(self, c3, c4):
        lat = self.lateral(c3)
        up = F.interpolate(self.top(c4), size=lat.shape[-2:], mode="nearest")
        lat += up
        return lat


def compute():
    torch.manual_seed(0)
    fpn = TinyFPN(4)
    fpn(torch.randn(2, 4, 8, 8), torch.randn(2, 4, 4, 4)).sum().backward()


if __name__ == "__main__":
    compute()
