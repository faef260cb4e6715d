# source: own knowledge of ViT / BERT-style embedding code (a method returns the token states and the
# mask as a tuple; a class token is written over row 0 after a similarity map read the states)
# error: A (`h` is saved by the matmul, then row 0 is overwritten in place)
import torch
import torch.nn as nn


class Tokens(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(6, d)
        self.cls = nn.Parameter(torch.zeros(d))
        self.head = nn.Linear(d, 3)

    def _embed(self, x):
        h = self.proj(x)
        mask = x.abs().sum(-1) > 0
        return h, mask

    def forward(self, x):
        h, mask = self._embed(x)
        sim = h @ h.transpose(-1, -2)
        h[:, 0] = self.cls
        pooled = (sim.softmax(-1) @ h)[:, 0]
        return self.head(pooled), mask


def main():
    torch.manual_seed(0)
    net = Tokens(4)
    out, _ = net(torch.randn(2, 5, 6))
    out.sum().backward()
    return [out.detach()] + [p.grad for p in net.parameters()]
