# source: own knowledge (a project's AddBias layer of another file, applied after a gate)
# error: A
# sigmoid saves its result; the other file's module forward adds its bias in place.
import torch
import torch.nn as nn
from p05helpers_layers import AddBias


class Gate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.fc = nn.Linear(c, c)
        self.bias = AddBias(c)

    def forward(self, x):
        g = torch.sigmoid(self.fc(x))
        return self.bias(g)


def compute():
    torch.manual_seed(0)
    Gate(4)(torch.randn(3, 4)).sum().backward()


if __name__ == "__main__":
    compute()
