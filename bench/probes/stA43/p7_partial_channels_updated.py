"""Only the first channels of a feature are transformed and written back: `h = feat[..., :d];
h = torch.tanh(self.fc(h)); feat[..., :d] = h`. The Linear saved its input, the view `h` of
`feat`: the write into `feat` breaks backward."""
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
        feat[..., :self.d] = h
        return feat


def compute():
    torch.manual_seed(0)
    m = PartialUpdate(6, 3)
    m(torch.randn(4, 6)).sum().backward()
    return [p.grad.flatten().tolist() for p in m.parameters()]
