# source: http://discuss.pytorch.org/t/in-place-operation-and-resnet/10724
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# ResidualUnitA: `x += residual` mutates x, which conv_1 saved as its input for backward.
import torch
import torch.nn as nn
import torch.nn.functional as F


# implementation 1
class ResidualUnitA(nn.Module):
    def __init__(self):
        super(ResidualUnitA, self).__init__()
        self.conv_0 = nn.Conv2d(3, 24, 3, padding=1, bias=False)
        self.bn_0 = nn.BatchNorm2d(24)
        self.conv_1 = nn.Conv2d(24, 24, 3, padding=1, bias=False)
        self.bn_1 = nn.BatchNorm2d(24)

    def forward(self, x):
        x = self.conv_0(x)
        x = self.bn_0(x)
        x = F.relu(x, inplace=True)

        residual = self.conv_1(x)
        residual = self.bn_1(residual)
        x += residual
        x = F.relu(x, inplace=True)

        return x


def compute():
    torch.manual_seed(0)
    model = ResidualUnitA()
    inp = torch.randn(2, 3, 8, 8)
    out = model(inp)
    out.sum().backward()
    return {name: p.grad for name, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
