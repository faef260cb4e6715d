# source: public pattern: FPN necks (mmdet/mmseg-style FPN, PSENet FPNF): top-down add into the lateral list, then a smoothing ConvModule stored back into the slot (written for stB43, not from a corpus case)
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvBNReLU(nn.Module):
    def __init__(self, cin, cout, k):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, padding=k // 2, bias=False)
        self.bn = nn.BatchNorm2d(cout)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Pyramid(nn.Module):
    def __init__(self, chans, width):
        super().__init__()
        self.lateral = nn.ModuleList([ConvBNReLU(c, width, 1) for c in chans])
        self.smooth = nn.ModuleList([ConvBNReLU(width, width, 3) for _ in chans[1:]])

    def forward(self, feats):
        outs = [self.lateral[i](f) for i, f in enumerate(feats)]
        for i in range(len(outs) - 1, 0, -1):
            outs[i - 1] += F.interpolate(outs[i], size=outs[i - 1].shape[-2:], mode="nearest")
            outs[i - 1] = self.smooth[i - 1](outs[i - 1])
        return torch.cat([o.mean((2, 3)) for o in outs], 1)


def main():
    net = Pyramid([3, 5, 7], 4)
    feats = [torch.randn(2, 3, 8, 8), torch.randn(2, 5, 4, 4), torch.randn(2, 7, 2, 2)]
    net(feats).pow(2).sum().backward()
    return [p.grad for p in net.parameters()]


if __name__ == "__main__":
    main()
