# source: own knowledge of adapter code (the block reads its encoder's projection directly:
# `self.encoder.proj(x)`, then adds a bias in place after a gated product read it)
# error: A (`h` is saved by `torch.sigmoid(h) * h`'s multiplication, then `h += ...` writes into it)
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        return self.norm(self.proj(x))


class Adapter(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.encoder = Encoder(d)
        self.bias = nn.Parameter(torch.zeros(d))

    def forward(self, x):
        h = self.encoder.proj(x)
        gated = torch.sigmoid(h) * h
        h += self.bias
        return gated.sum() + h.sum()


def main():
    torch.manual_seed(0)
    net = Adapter(4)
    loss = net(torch.randn(3, 4))
    loss.backward()
    return [loss.detach()] + [p.grad for p in net.parameters()]
