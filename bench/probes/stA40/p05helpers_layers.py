# helper module of p05: a bias module whose forward adds in place
import torch
import torch.nn as nn


class AddBias(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(c))

    def forward(self, x):
        x += self.bias
        return x
