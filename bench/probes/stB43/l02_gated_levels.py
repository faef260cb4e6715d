# source: public pattern: multi-level fusion: each level gated (sigmoid) into its slot, then the level below added in place (written for stB43, not from a corpus case)
import torch
import torch.nn as nn


class Levels(nn.Module):
    def __init__(self, n, d):
        super().__init__()
        self.proj = nn.ModuleList([nn.Linear(d, d) for _ in range(n)])

    def forward(self, x):
        hs = [torch.tanh(lin(x)) for lin in self.proj]
        for i in range(1, len(hs)):
            hs[i] = torch.sigmoid(hs[i])
            hs[i] += hs[i - 1]
        return hs[-1]


def main():
    net = Levels(3, 5)
    net(torch.randn(4, 5)).sum().backward()
    return [p.grad for p in net.parameters()]


if __name__ == "__main__":
    main()
