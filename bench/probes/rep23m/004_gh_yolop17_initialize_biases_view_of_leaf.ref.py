# reference: PR #17, write the initial biases through `.data`
import math

import torch
import torch.nn as nn


class Detect(nn.Module):
    def __init__(self, nc=2, na=3, ch=(4, 4)):
        super().__init__()
        self.nc, self.na, self.no = nc, na, nc + 5
        self.m = nn.ModuleList(nn.Conv2d(c, self.no * self.na, 1) for c in ch)
        self.stride = torch.tensor([8.0, 16.0])

    def forward(self, xs):
        return [conv(x) for conv, x in zip(self.m, xs)]


class MCnet(nn.Module):
    def __init__(self):
        super().__init__()
        self.detect = Detect()
        self._initialize_biases()

    def _initialize_biases(self, cf=None):
        m = self.detect
        for mi, s in zip(m.m, m.stride):
            b = mi.bias.view(m.na, -1)
            b.data[:, 4] += math.log(8 / (640 / s) ** 2)
            b.data[:, 5:] += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)

    def forward(self, xs):
        return self.detect(xs)


def compute():
    torch.manual_seed(0)
    model = MCnet()
    xs = [torch.randn(1, 4, 4, 4), torch.randn(1, 4, 2, 2)]
    loss = sum(o.pow(2).mean() for o in model(xs))
    loss.backward()
    out = {n + ".grad": p.grad for n, p in model.named_parameters()}
    out.update({n: p.detach().clone() for n, p in model.named_parameters()})
    return out


if __name__ == "__main__":
    compute()
