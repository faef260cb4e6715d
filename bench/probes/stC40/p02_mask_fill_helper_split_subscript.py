# source: own knowledge (a masking helper writing into its argument, given one part of a split score tensor)
# error: C (Output 0 of SplitBackward0 is a view and is being modified inplace)
import torch
import torch.nn as nn


def fill_invalid(scores, valid):
    scores[~valid] = -1e4
    return scores.softmax(-1)


class Head(nn.Module):
    def __init__(self, dim=6, a=4, b=3):
        super().__init__()
        self.proj = nn.Linear(dim, a + b)
        self.a, self.b = a, b

    def forward(self, x, valid):
        word, copy = self.proj(x).split([self.a, self.b], dim=-1)
        p = fill_invalid(word, valid)
        return p.sum() + copy.sum()


def main():
    torch.manual_seed(0)
    m = Head()
    valid = torch.tensor([True, False, True, True])
    out = m(torch.randn(5, 6), valid)
    out.backward()
    return [out.detach(), m.proj.weight.grad]
