# control: the private factory returns what the caller handed in (an activation class the file cannot know):
# the in-place dropout after it is not proven (here it runs: the class is GELU).
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim, act_layer, p=0.1):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.act = self._make_act(act_layer)
        self.drop = self._make_drop(p)

    def _make_act(self, act_layer):
        return act_layer()

    def _make_drop(self, p):
        return nn.Dropout(p, inplace=True)

    def forward(self, x):
        return self.drop(self.act(self.fc(x)))


def compute(act_layer=nn.GELU):
    torch.manual_seed(0)
    block = Block(6, act_layer)
    block(torch.randn(3, 6)).sum().backward()
    return [p.grad.sum().item() for p in block.parameters()]


if __name__ == "__main__":
    compute()
