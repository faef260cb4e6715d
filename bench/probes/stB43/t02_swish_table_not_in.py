# source: public pattern: conv-act unit with an ACTIVATIONS table holding the file's Swish class, `if act not in ACTIVATIONS: raise`, residual `y += x` (written for stB43, not from a corpus case)
import torch
import torch.nn as nn


class Swish(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


ACTIVATIONS = {"relu": nn.ReLU, "relu6": nn.ReLU6, "swish": Swish}


class ConvAct(nn.Module):
    def __init__(self, cin, cout, act):
        super().__init__()
        if act not in ACTIVATIONS:
            raise ValueError(f"unknown activation {act}, one of {len(ACTIVATIONS)}")
        self.conv = nn.Conv1d(cin, cout, 3, padding=1)
        self.act = ACTIVATIONS[act](inplace=True)

    def forward(self, x):
        return self.act(self.conv(x))


class Unit(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.inner = ConvAct(c, c, act="relu")

    def forward(self, x):
        y = self.inner(x)
        y += x
        return y


def main():
    net = Unit(3)
    net(torch.randn(2, 3, 8)).pow(2).sum().backward()
    return [p.grad for p in net.parameters()]


if __name__ == "__main__":
    main()
