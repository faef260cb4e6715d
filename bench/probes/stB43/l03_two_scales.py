# source: public pattern: two-scale feature list written out, one slot replaced by its exp before the other is added in place (written for stB43, not from a corpus case)
import torch
import torch.nn as nn


class TwoScale(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fine = nn.Sequential(nn.Linear(d, d), nn.Sigmoid())
        self.coarse = nn.Sequential(nn.Linear(d, d), nn.Tanh())

    def forward(self, x):
        scales = [self.fine(x), self.coarse(x)]
        scales[1] = torch.exp(scales[1])
        scales[0] += scales[1]
        return scales[0].sum() + scales[1].sum()


def main():
    net = TwoScale(6)
    net(torch.randn(3, 6)).backward()
    return [p.grad for p in net.parameters()]


if __name__ == "__main__":
    main()
