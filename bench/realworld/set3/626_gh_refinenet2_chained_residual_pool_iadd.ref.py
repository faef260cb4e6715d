# reference fix for 626 (maintainer commit e79e275): ChainedResidualPool uses `x = x + path`
# (626helpers_refinenet_blocks_fixed.py); the model file is unchanged.
import os
import sys
from importlib import import_module

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
BLOCKS = "626helpers_refinenet_blocks_fixed"


def build_model_class(blocks):
    RefineNetBlock, ResidualConvUnit = blocks.RefineNetBlock, blocks.ResidualConvUnit

    class TinyResNet(nn.Module):
        """Stand-in for torchvision resnet101: conv1/bn1/relu/maxpool + layer1..layer4 (strides 4, 8, 16, 32)."""

        def __init__(self, chans=(8, 16, 32, 64)):
            super().__init__()
            self.conv1 = nn.Conv2d(3, chans[0], kernel_size=3, stride=2, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(chans[0])
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
            self.layer1 = nn.Conv2d(chans[0], chans[0], kernel_size=3, padding=1)
            self.layer2 = nn.Conv2d(chans[0], chans[1], kernel_size=3, stride=2, padding=1)
            self.layer3 = nn.Conv2d(chans[1], chans[2], kernel_size=3, stride=2, padding=1)
            self.layer4 = nn.Conv2d(chans[2], chans[3], kernel_size=3, stride=2, padding=1)

    class BaseRefineNet4Cascade(nn.Module):

        def __init__(self, input_shape,
                     refinenet_block,
                     num_classes=1,
                     features=256,
                     resnet_factory=TinyResNet,
                     pretrained=True,
                     freeze_resnet=True):
            super().__init__()

            input_channel, input_size = input_shape

            if input_size % 32 != 0:
                raise ValueError(f"{input_shape} not divisble by 32")

            resnet = resnet_factory()

            self.layer1 = nn.Sequential(
                resnet.conv1,
                resnet.bn1,
                resnet.relu,
                resnet.maxpool,
                resnet.layer1
            )

            self.layer2 = resnet.layer2
            self.layer3 = resnet.layer3
            self.layer4 = resnet.layer4

            if freeze_resnet:
                layers = [self.layer1, self.layer2, self.layer3, self.layer4]
                for layer in layers:
                    for param in layer.parameters():
                        param.requires_grad = False

            c1, c2, c3, c4 = 8, 16, 32, 64
            self.layer1_rn = nn.Conv2d(
                c1, features, kernel_size=3, stride=1, padding=1, bias=False)
            self.layer2_rn = nn.Conv2d(
                c2, features, kernel_size=3, stride=1, padding=1, bias=False)
            self.layer3_rn = nn.Conv2d(
                c3, features, kernel_size=3, stride=1, padding=1, bias=False)
            self.layer4_rn = nn.Conv2d(
                c4, 2 * features, kernel_size=3, stride=1, padding=1, bias=False)

            self.refinenet4 = RefineNetBlock(
                2 * features, (2 * features, input_size // 32))
            self.refinenet3 = RefineNetBlock(
                features, (2 * features, input_size // 32), (features, input_size // 16))
            self.refinenet2 = RefineNetBlock(
                features, (features, input_size // 16), (features, input_size // 8))
            self.refinenet1 = RefineNetBlock(
                features, (features, input_size // 8), (features, input_size // 4))

            self.output_conv = nn.Sequential(
                ResidualConvUnit(features),
                ResidualConvUnit(features),
                nn.Conv2d(features, num_classes, kernel_size=1, stride=1, padding=0, bias=True)
            )

        def forward(self, x):

            layer_1 = self.layer1(x)
            layer_2 = self.layer2(layer_1)
            layer_3 = self.layer3(layer_2)
            layer_4 = self.layer4(layer_3)

            layer_1_rn = self.layer1_rn(layer_1)
            layer_2_rn = self.layer2_rn(layer_2)
            layer_3_rn = self.layer3_rn(layer_3)
            layer_4_rn = self.layer4_rn(layer_4)

            path_4 = self.refinenet4(layer_4_rn)
            path_3 = self.refinenet3(path_4, layer_3_rn)
            path_2 = self.refinenet2(path_3, layer_2_rn)
            path_1 = self.refinenet1(path_2, layer_1_rn)
            out = self.output_conv(path_1)
            return out

    class RefineNet4Cascade(BaseRefineNet4Cascade):

        def __init__(self, input_shape, num_classes=1, features=256, resnet_factory=TinyResNet,
                     pretrained=True, freeze_resnet=True):
            super().__init__(input_shape, RefineNetBlock,
                             num_classes=num_classes, features=features,
                             resnet_factory=resnet_factory, pretrained=pretrained,
                             freeze_resnet=freeze_resnet)

    return RefineNet4Cascade


def compute():
    torch.manual_seed(0)
    blocks = import_module(BLOCKS)
    RefineNet4Cascade = build_model_class(blocks)
    net = RefineNet4Cascade(input_shape=(3, 32), num_classes=2, features=8, pretrained=False)
    x = torch.randn(2, 3, 32, 32)
    target = torch.randn(2, 2, 8, 8)

    output = net(x)
    criterion = nn.MSELoss()
    loss = criterion(output, target)
    net.zero_grad()
    loss.backward()
    return {n: p.grad.clone() for n, p in net.named_parameters() if p.grad is not None}


if __name__ == "__main__":
    compute()
