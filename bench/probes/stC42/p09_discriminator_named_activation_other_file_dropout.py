# source: own knowledge (GAN discriminators taking `activation_by_name("lrelu")` from a common module whose
# other branches build modules saving their input, followed by an in-place dropout)
# error: A
# the name the call passes picks the in-place LeakyReLU (saves its result); the in-place dropout overwrites it.
import torch
import torch.nn as nn

from p09helpers_common import activation_by_name


class Discriminator(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, 16)
        self.act = activation_by_name("lrelu")
        self.drop = nn.Dropout(0.3, inplace=True)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(self.drop(self.act(self.fc1(x))))


def compute():
    torch.manual_seed(0)
    disc = Discriminator(8)
    disc(torch.randn(6, 8)).sum().backward()
    return [p.grad.sum().item() for p in disc.parameters()]


if __name__ == "__main__":
    compute()
