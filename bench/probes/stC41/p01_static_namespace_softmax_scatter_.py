# source: own knowledge (a library-style namespace class of helpers, `class util: f = staticmethod(f)`, as allennlp/fairseq stand-ins do)
# error: A (one of the variables needed for gradient computation has been modified by an inplace operation: SoftmaxBackward0 saves its output)
import torch
import torch.nn as nn


def masked_softmax(scores, mask):
    scores = scores.masked_fill(~mask, -1e9)
    return torch.softmax(scores, dim=-1)


class ops:  # a namespace of helpers
    masked_softmax = staticmethod(masked_softmax)


class Pointer(nn.Module):
    def __init__(self, dim=6):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, mask, boost):
        probs = ops.masked_softmax(self.proj(x), mask)
        probs.scatter_(-1, boost, 0.5)
        return probs


def main():
    torch.manual_seed(0)
    m = Pointer()
    x = torch.randn(3, 6)
    mask = torch.ones(3, 6, dtype=torch.bool)
    out = m(x, mask, torch.tensor([[1], [2], [0]])).pow(2).sum()
    out.backward()
    return [out.detach(), m.proj.weight.grad]
