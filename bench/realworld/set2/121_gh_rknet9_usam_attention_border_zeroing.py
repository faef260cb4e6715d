# source: https://github.com/AggMan96/RK-Net/issues/9
# pattern: subscript_assign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# RK-Net's unit-subtraction attention module (USAM) with polish=True zeroes the border of its attention map in place
# (`att[:, :, :, 0] = 0`, ...). `att` is the output of nn.ReLU, which saved it for backward, so training fails;
# the fix proposed in the thread is `att = att.clone()` before the border writes. ResNet-50 trunk -> tiny conv stand-in.
import torch
import torch.nn as nn
import torch.nn.functional as F


class USAM(nn.Module):
    def __init__(self, kernel_size=3, padding=1, polish=False):
        super(USAM, self).__init__()

        kernel = torch.ones((kernel_size, kernel_size))
        kernel = kernel.unsqueeze(0).unsqueeze(0)
        self.weight = nn.Parameter(data=kernel, requires_grad=False)

        kernel2 = torch.ones((1, 1)) * (kernel_size * kernel_size)
        kernel2 = kernel2.unsqueeze(0).unsqueeze(0)
        self.weight2 = nn.Parameter(data=kernel2, requires_grad=False)

        self.polish = polish
        self.pad = padding
        self.relu = nn.ReLU()
        self.bn = nn.BatchNorm2d(1)

    def __call__(self, x):
        fmap = x.sum(1, keepdim=True)
        x1 = F.conv2d(fmap, self.weight, padding=self.pad)
        x2 = F.conv2d(fmap, self.weight2, padding=0)

        att = x2 - x1
        att = self.bn(att)
        att = self.relu(att)

        if self.polish:
            att[:, :, :, 0] = 0
            att[:, :, :, -1] = 0
            att[:, :, 0, :] = 0
            att[:, :, -1, :] = 0

        output = x + att * x

        return output


class TinyRKNet(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.ReLU())
        self.usam = USAM(polish=True)
        self.layer = nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.avgpool2 = nn.AdaptiveAvgPool2d((1, 1))
        self.classifier = nn.Linear(16, num_classes)

    def forward(self, x):
        x = self.usam(self.stem(x))
        x = self.avgpool2(self.layer(x)).flatten(1)
        return self.classifier(x)


def compute():
    torch.manual_seed(0)
    model = TinyRKNet()
    img = torch.randn(2, 3, 16, 16)
    target = torch.randint(0, 5, (2,))
    loss = F.cross_entropy(model(img), target)
    loss.backward()
    return {name: p.grad for name, p in model.named_parameters() if p.grad is not None}


if __name__ == "__main__":
    compute()
