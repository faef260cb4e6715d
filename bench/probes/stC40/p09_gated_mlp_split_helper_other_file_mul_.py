# source: own knowledge (a gated MLP / SwiGLU block whose fused projection is split by a helper of another file, the
# value half then scaled in place by the activated gate); runs with p09helpers_ops.py
# error: C (Output 0 of SplitBackward0 is a view and is being modified inplace)
import torch
import torch.nn as nn
import torch.nn.functional as F

from p09helpers_ops import split_gate


class GatedMLP(nn.Module):
    def __init__(self, dim=4, hidden=6):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden * 2)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        value, gate = split_gate(self.fc1(x))
        value.mul_(F.silu(gate))
        return self.fc2(value)


def main():
    torch.manual_seed(0)
    m = GatedMLP()
    out = m(torch.randn(3, 4)).sum()
    out.backward()
    return [out.detach(), m.fc1.weight.grad]
