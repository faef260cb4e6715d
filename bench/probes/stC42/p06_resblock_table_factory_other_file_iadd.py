# source: own knowledge (residual blocks taking their activation from a layers package's
# `create_act_layer(name, inplace=True)`, which looks the class up in a table)
# error: A
# every class of the table runs in place and saves its result; `out += x` writes into it.
import torch
import torch.nn as nn

from p06helpers_create_act import create_act_layer


class BasicBlock(nn.Module):
    def __init__(self, c, act="relu"):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.bn = nn.BatchNorm2d(c)
        self.act = create_act_layer(act)

    def forward(self, x):
        out = self.act(self.bn(self.conv(x)))
        out += x
        return out


def compute():
    torch.manual_seed(0)
    block = BasicBlock(3, act="elu")
    block(torch.randn(2, 3, 5, 5)).sum().backward()
    return [p.grad.sum().item() for p in block.parameters()]


if __name__ == "__main__":
    compute()
