# source: https://github.com/pytorch/pytorch/issues/5687
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# ResidualBlock: self.left ends with nn.ReLU(inplace=True), whose backward needs its output; `out += residual` then
# overwrites that output. (In 2018 this trained silently with exploding loss; current PyTorch raises.)
import torch
import torch.nn as nn
import torch.nn.functional as F


class ResidualBlock(nn.Module):
    def __init__(self, ch_in, ch_out, shortcut = None):
        super(ResidualBlock, self).__init__()
        self.left = nn.Sequential(
            nn.Conv2d(ch_in, 128, 3, 1, 1),  # ch_in, ch_out, kernel_size, stride, pad
            nn.ReLU(inplace=True),
            nn.Conv2d(128, ch_out, 3, 1, 1),
            nn.ReLU(inplace=True),
        )
        self.right = shortcut

    def forward(self, x):
        out = self.left(x)
        residual = x if self.right is None else self.right(x)
        out += residual
        return F.relu(out, inplace=False)


class ContentWeightedCNN(nn.Module):
    # trimmed encoder: conv stem followed by residual blocks
    def __init__(self):
        super(ContentWeightedCNN, self).__init__()
        self.model_name = 'ContentWeightedCNN'
        self.encoder = nn.Sequential(
            nn.Conv2d(3, 16, 3, 1, 1),
            nn.ReLU(inplace=True),
            ResidualBlock(16, 16),
            ResidualBlock(16, 8, shortcut=nn.Conv2d(16, 8, 1)),
        )

    def forward(self, x):
        return self.encoder(x)


def compute():
    torch.manual_seed(0)
    model = ContentWeightedCNN()
    x = torch.randn(2, 3, 6, 6)
    loss = F.mse_loss(model(x), torch.zeros(2, 8, 6, 6))
    loss.backward()
    return {name: p.grad for name, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
