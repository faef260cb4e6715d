# control: the factory takes a built module, switches its flag off and returns it: the dropout does not run
# in place, nothing is proven (it runs).
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim, p=0.1):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.act = self._act()
        self.drop = self._no_inplace(nn.Dropout(p, inplace=True))

    @staticmethod
    def _act():
        return nn.Sigmoid()

    @staticmethod
    def _no_inplace(module):
        module.inplace = False
        return module

    def forward(self, x):
        return self.drop(self.act(self.fc(x)))


def compute():
    torch.manual_seed(0)
    block = Block(6)
    block(torch.randn(3, 6)).sum().backward()
    return [p.grad.sum().item() for p in block.parameters()]


if __name__ == "__main__":
    compute()
