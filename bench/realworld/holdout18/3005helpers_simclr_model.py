# Library module for case 3005 (used by the original and the reference alike; the fix is in the training script).
# leftthomas/SimCLR, model.py (Model), read at the parent of commit fac6ed0 ("fix inplace bug", 2020-02-21). Written
# anew at small size (not copied): the encoder f (a backbone without its final Linear), the projection head g
# (Linear -> ReLU(inplace=True) -> Linear, no biases) and the forward returning the L2-normalised feature and projection
# follow the source.
# Stand-in: the backbone is a two-convolution network with global average pooling and 32 output channels instead of
# torchvision's resnet18 (512 channels); the head's input width follows it.
import torch
import torch.nn as nn
import torch.nn.functional as F


def small_backbone():
    return [nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d((1, 1)), nn.Linear(32, 10)]


class Model(nn.Module):
    def __init__(self, feature_dim=128):
        super(Model, self).__init__()
        self.f = []
        for module in small_backbone():
            if not isinstance(module, nn.Linear):
                self.f.append(module)
        self.f = nn.Sequential(*self.f)
        self.g = nn.Sequential(nn.Linear(32, feature_dim, bias=False), nn.ReLU(inplace=True),
                               nn.Linear(feature_dim, feature_dim, bias=False))

    def forward(self, x):
        x = self.f(x)
        feature = torch.flatten(x, start_dim=1)
        out = self.g(feature)
        return F.normalize(feature, dim=-1), F.normalize(out, dim=-1)
