# control: the factory may build a GELU (saves its input, not its result): the in-place dropout after it
# is not proven (here it runs: every construction asks for "gelu").
import torch
import torch.nn as nn

from n01helpers_acts import get_act


class Block(nn.Module):
    def __init__(self, dim, act="gelu", p=0.1):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.act = get_act(act)
        self.drop = self.__dropout(p)

    def __dropout(self, p):
        return nn.Dropout(p, inplace=True)

    def forward(self, x):
        return self.drop(self.act(self.fc(x)))


def compute():
    torch.manual_seed(0)
    block = Block(6)
    block(torch.randn(3, 6)).sum().backward()
    return [p.grad.sum().item() for p in block.parameters()]


if __name__ == "__main__":
    compute()
