# source: public pattern: YOLO-style Convolutional: activate_name table of classes and instances, `assert activate in activate_name.keys()`, residual `out += x` (written for stB43, not from a corpus case)
import torch
import torch.nn as nn
import torch.nn.functional as F


class Mish(nn.Module):
    def forward(self, x):
        return x * torch.tanh(F.softplus(x))


activate_name = {"relu": nn.ReLU, "leaky": nn.LeakyReLU, "linear": nn.Identity(), "mish": Mish()}


class Conv(nn.Module):
    def __init__(self, cin, cout, k, activate="relu"):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, padding=k // 2, bias=False)
        self.bn = nn.BatchNorm2d(cout)
        assert activate in activate_name.keys()
        if activate == "relu":
            self.act = activate_name[activate](inplace=True)
        elif activate == "leaky":
            self.act = activate_name[activate](negative_slope=0.1, inplace=True)
        else:
            self.act = activate_name[activate]

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Residual(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.block = nn.Sequential(Conv(c, c // 2, 1), Conv(c // 2, c, 3))

    def forward(self, x):
        out = self.block(x)
        out += x
        return out


def main():
    net = Residual(4)
    net(torch.randn(2, 4, 6, 6)).sum().backward()
    return [p.grad for p in net.parameters()]


if __name__ == "__main__":
    main()
