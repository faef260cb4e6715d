"""Look-alike of p7: the feature is bound again (`feat = feat * 1.0`, a new tensor) between the
save of its view and the write: the write goes into the new tensor, nothing saved changes."""
import torch
import torch.nn as nn


class PartialUpdate(nn.Module):
    def __init__(self, dim, d):
        super().__init__()
        self.d = d
        self.inp = nn.Linear(dim, dim)
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        feat = self.inp(x)
        h = feat[..., :self.d]
        h = torch.tanh(self.fc(h))
        feat = feat * 1.0
        feat[..., :self.d] = h
        return feat


def compute():
    torch.manual_seed(0)
    m = PartialUpdate(6, 3)
    m(torch.randn(4, 6)).sum().backward()
    return [p.grad.flatten().tolist() for p in m.parameters()]
