# source: https://github.com/pytorch/pytorch/issues/72992
# pattern: inplace_kwarg
# codemod_fixable: yes
# error: A
# ref_semantics: same
# nn.Sequential(Conv2d, LeakyReLU(0.2, inplace=True), Dropout(0.25, inplace=True), Conv2d): the in-place dropout
# overwrites the in-place LeakyReLU result that its backward needs.
import torch
import torch.nn as nn


class Discriminator(nn.Module):
    def __init__(self, nc=3, ndf=8):
        super(Discriminator, self).__init__()
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Dropout(0.25, inplace=True),
            nn.Conv2d(ndf, 1, 4, 1, 0, bias=False),
        )

    def forward(self, input):
        return self.main(input)


def compute():
    torch.manual_seed(0)
    netD = Discriminator()
    out = netD(torch.randn(2, 3, 8, 8))
    loss = nn.functional.binary_cross_entropy_with_logits(out.view(-1), torch.ones(2))
    loss.backward()
    return {name: p.grad for name, p in netD.named_parameters()}


if __name__ == "__main__":
    compute()
