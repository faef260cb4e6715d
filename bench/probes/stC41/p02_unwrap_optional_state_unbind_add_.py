# source: own knowledge (TorchScript-friendly RNN: `torch.jit._unwrap_optional(state)` before unbinding the layers' states)
# error: C (Output 0 of UnbindBackward0 is a view and is being modified inplace. This view is the output of a function that returns multiple views)
from typing import Optional

import torch
import torch.nn as nn
from torch import Tensor


class StackedCell(nn.Module):
    def __init__(self, dim=4, layers=2):
        super().__init__()
        self.cells = nn.ModuleList([nn.RNNCell(dim, dim) for _ in range(layers)])

    def forward(self, x: Tensor, state: Optional[Tensor] = None):
        if state is None:
            state = x.new_zeros(len(self.cells), x.size(0), x.size(1))
        h = torch.jit._unwrap_optional(state)
        hs = h.unbind(0)
        out = []
        for i, cell in enumerate(self.cells):
            hi = hs[i]
            hi.add_(0.1)
            x = cell(x, hi)
            out.append(x)
        return torch.stack(out)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.init = nn.Linear(3, 8)
        self.rnn = StackedCell()

    def forward(self, x, ctx):
        state = self.init(ctx).view(2, 2, 4)
        return self.rnn(x, state)


def main():
    torch.manual_seed(0)
    m = Model()
    out = m(torch.randn(2, 4), torch.randn(2, 3)).sum()
    out.backward()
    return [out.detach(), m.init.weight.grad]
