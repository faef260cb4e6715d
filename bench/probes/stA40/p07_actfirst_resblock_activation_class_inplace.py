# source: own knowledge (activation-first residual blocks of GAN generators, activation given as a class)
# error: A
# The shortcut conv saved the block's input; the block's first activation, built from `act_layer` with
# inplace=True, then writes into that input.
import torch
import torch.nn as nn


class ActFirstResBlock(nn.Module):
    def __init__(self, fin, fout, act_layer=nn.LeakyReLU):
        super().__init__()
        self.shortcut = nn.Conv2d(fin, fout, 1, bias=False)
        self.act = act_layer(negative_slope=0.2, inplace=True)
        self.conv = nn.Conv2d(fin, fout, 3, padding=1)

    def forward(self, x):
        s = self.shortcut(x)
        h = self.conv(self.act(x))
        return s + h


def compute():
    torch.manual_seed(0)
    stem = nn.Conv2d(3, 4, 3, padding=1)
    block = ActFirstResBlock(4, 4)
    block(stem(torch.randn(2, 3, 8, 8))).sum().backward()


if __name__ == "__main__":
    compute()
