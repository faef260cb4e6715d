# source: https://github.com/leftthomas/R2Plus1D-C3D/commit/ac87815a0c2eda00358e63cafa605e4e8eb84a8b
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# leftthomas/R2Plus1D-C3D (in late 2017 the author's capsule-network repository), capsulelayer.py: the routing of
# CapsuleConv2d starts from `probs = Variable(torch.ones(...)).unsqueeze(dim=-1)` and, between iterations, updates
# it with `probs += delta_logits.exp()`. The product `probs * input` of the same iteration saved `probs` for its
# backward, so training SquashCapsuleNet raises "one of the variables needed for gradient computation has been
# modified by an inplace operation". Commit ac87815 ("fix the bug: probs += delta_logits.exp() is an inplace
# operation, so use probs = probs + delta_logits.exp() to replace it") does what its message says.
# The library module is 3006helpers_capsulelayer.py (ref: ..._fixed.py); its header names its stand-ins. This program
# is the repository's model.py (SquashCapsuleNet) at small size.
# Stand-ins here: the network has one capsule stage (config [16, '16D'] instead of [16, '16D', 32, '32D', 64, '64D'];
# the classifier's in_capsules follows), 1x8x8 MNIST-like random inputs in a batch of 2, the class "probabilities"
# trained with a negative log-likelihood, one backward pass; F.softmax over the classes gets an explicit dim=-1.
import importlib
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
capsulelayer = importlib.import_module("3006helpers_capsulelayer")
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
