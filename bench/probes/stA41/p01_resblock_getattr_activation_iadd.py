# source: own knowledge (residual blocks that pick their activation by name: `getattr(nn, act)()`)
# error: A
# The block's activation is `getattr(nn, "ReLU")()` (the default name); `out += x` then overwrites the ReLU
# result that ReLU's backward saved.
import torch
import torch.nn as nn


class ResBlock(nn.Module):
    def __init__(self, channels, act="ReLU"):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.act = getattr(nn, act)()

    def forward(self, x):
        out = self.act(self.conv(x))
        out += x
        return out


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 3, padding=1)
        self.block1 = ResBlock(4)
        self.block2 = ResBlock(4, act="Tanh")

    def forward(self, x):
        return self.block2(self.block1(self.stem(x)))


def compute():
    torch.manual_seed(0)
    net = Net()
    net(torch.randn(2, 3, 8, 8)).sum().backward()


if __name__ == "__main__":
    compute()
