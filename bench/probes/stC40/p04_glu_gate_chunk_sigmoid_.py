# source: own knowledge (a gated conv block: value and gate from one conv, the gate squashed in place)
# error: C (Output 1 of SplitBackward0 is a view and is being modified inplace)
import torch
import torch.nn as nn


class GatedConv(nn.Module):
    def __init__(self, ch=4):
        super().__init__()
        self.conv = nn.Conv1d(ch, ch * 2, 3, padding=1)

    def forward(self, x):
        value, gate = torch.chunk(self.conv(x), 2, dim=1)
        torch.sigmoid_(gate)
        return value * gate


def main():
    torch.manual_seed(0)
    m = GatedConv()
    out = m(torch.randn(2, 4, 7)).sum()
    out.backward()
    return [out.detach(), m.conv.weight.grad]
