# source: own knowledge (a stacked-RNN cell loop over the layers' initial states, each squashed in place)
# error: C (Output 0 of UnbindBackward0 is a view and is being modified inplace)
import torch
import torch.nn as nn


class StackedCell(nn.Module):
    def __init__(self, hidden=5, layers=2):
        super().__init__()
        self.init = nn.Linear(hidden, hidden * layers)
        self.cells = nn.ModuleList(nn.GRUCell(hidden, hidden) for _ in range(layers))
        self.layers = layers

    def forward(self, x):
        h0 = self.init(x).view(x.size(0), self.layers, -1)
        states = h0.unbind(1)
        out = x
        for cell, h in zip(self.cells, states):
            h.tanh_()
            out = cell(out, h)
        return out


def main():
    torch.manual_seed(0)
    m = StackedCell()
    out = m(torch.randn(3, 5)).sum()
    out.backward()
    return [out.detach(), m.init.weight.grad]
