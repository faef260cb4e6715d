# control: the private method builds an in-place dropout, but the layer before it is a GELU (saves its input,
# not its result): it runs.
import torch
import torch.nn as nn


class ConvBlock(nn.Module):
    def __init__(self, cin, cout, p=0.2, is_3d=False):
        super().__init__()
        self.p = p
        self.is_3d = is_3d
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        self.act = nn.GELU()
        self.drop = self.__dropout()

    def __dropout(self):
        return nn.Dropout2d(self.p, inplace=True) if not self.is_3d else nn.Dropout3d(self.p, inplace=True)

    def forward(self, x):
        return self.drop(self.act(self.conv(x)))


def compute():
    torch.manual_seed(0)
    block = ConvBlock(1, 3)
    block(torch.randn(2, 1, 5, 5)).sum().backward()
    return [p.grad.sum().item() for p in block.parameters()]


if __name__ == "__main__":
    compute()
