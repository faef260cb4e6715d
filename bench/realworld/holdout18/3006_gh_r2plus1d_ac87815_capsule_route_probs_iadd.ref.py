# reference fix for 3006: commit ac87815 in the library module (3006helpers_capsulelayer_fixed.py):
# `probs = probs + delta_logits.exp()` in route_conv2d.
import importlib
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
capsulelayer = importlib.import_module("3006helpers_capsulelayer_fixed")
CapsuleLinear, CapsuleConv2d = capsulelayer.CapsuleLinear, capsulelayer.CapsuleConv2d

config = {
    'MNIST': [16, '16D'],
}


class SquashCapsuleNet(nn.Module):
    def __init__(self, in_channels, num_class, data_type):
        super(SquashCapsuleNet, self).__init__()
        self.features = self.make_layers(in_channels, config[data_type])
        self.classifier = CapsuleLinear(in_capsules=2 * 2 * 16 // 8, out_capsules=num_class, in_length=8,
                                        out_length=16)

    def forward(self, x):
        out = self.features(x)
        out = out.view(*out.size()[:2], -1)
        out = out.transpose(-1, -2)
        out = out.contiguous().view(out.size(0), -1, 8)
        out = self.classifier(out)

        classes = (out ** 2).sum(dim=-1) ** 0.5
        classes = F.softmax(classes, dim=-1)
        return classes

    @staticmethod
    def make_layers(in_channels, cfg):
        layers = []
        layers += [nn.Conv2d(in_channels, 16, kernel_size=3, padding=1, stride=1),
                   nn.BatchNorm2d(16),
                   nn.ReLU()]
        in_channels = 16
        for x in cfg:
            if type(x) == str:
                x = int(x.replace('D', ''))
                layers += [CapsuleConv2d(in_channels, x, kernel_size=3, in_length=8, out_length=8, padding=1, stride=2)]
            else:
                layers += [CapsuleConv2d(in_channels, x, kernel_size=3, in_length=8, out_length=8, padding=1)]
            in_channels = x
        layers += [nn.AdaptiveAvgPool2d(2)]
        return nn.Sequential(*layers)


def compute():
    torch.manual_seed(0)
    model = SquashCapsuleNet(in_channels=1, num_class=3, data_type='MNIST')
    images = torch.randn(2, 1, 8, 8)
    labels = torch.tensor([0, 2])
    classes = model(images)
    loss = F.nll_loss(torch.log(classes), labels)
    loss.backward()
    return {
        "classes": classes.detach(),
        "features.0.weight.grad": model.features[0].weight.grad,
        "features.3.weight.grad": model.features[3].weight.grad,
        "features.4.weight.grad": model.features[4].weight.grad,
        "classifier.weight.grad": model.classifier.weight.grad,
    }


if __name__ == "__main__":
    compute()
