"""A memory module gates each slot in turn and writes it back: `slot = mem[:, i]; slot = slot *
torch.sigmoid(self.gate(slot)); mem[:, i] = slot` over `range(self.slots)`. The gate's Linear
(and the product) saved the view `slot` of `mem`: the write into `mem` breaks backward."""
import torch
import torch.nn as nn


class SlotMemory(nn.Module):
    def __init__(self, dim, slots):
        super().__init__()
        self.init = nn.Linear(dim, slots * dim)
        self.gate = nn.Linear(dim, dim)
        self.slots = slots
        self.dim = dim

    def forward(self, x):
        mem = self.init(x).view(x.shape[0], self.slots, self.dim)
        for i in range(self.slots):
            slot = mem[:, i]
            slot = slot * torch.sigmoid(self.gate(slot))
            mem[:, i] = slot
        return mem.sum(1)


def compute():
    torch.manual_seed(0)
    m = SlotMemory(4, 3)
    m(torch.randn(2, 4)).pow(2).sum().backward()
    return [p.grad.flatten().tolist() for p in m.parameters()]
