# Library module for case 3204 (original): frgfm/holocron, holocron/models/darknet.py at the parent of commit a4cd000a
# ("fix: Fixed Darknet53 autograd issue (#70)", 2020-07-25). Written anew at small size; DarkBlockV3 (a _ResBlock whose
# main branch is two conv_sequences, each ending with the shared activation module), DarknetBodyV3 (default
# `act_layer = nn.LeakyReLU(0.1, inplace=True)`, one instance passed to every conv_sequence and block), its
# _make_layer, DarknetV3 and the `_darknet` builder over `default_cfgs` follow the source. The block's branch ends with
# the in-place LeakyReLU (which saves its output), and _ResBlock.forward then adds the shortcut into that output
# (`out += identity`, in 3204helpers_holocron_resnet.py).
# Stand-ins: DarknetV1 / V2 and the pretrained-weights download are left out; the darknet53 layout is shrunk to
# [(1, 8, 16), (2, 16, None)] (the source's is [(1, 64, 128), (2, 128, 256), (8, 256, 512), (8, 512, 1024),
# (4, 1024, None)]), with a correspondingly narrower stem (4 and 8 channels instead of 32 and 64); the source's
# padding=2 typo in the stem's second conv (fixed in the same PR) is kept; init_module's Kaiming init is written out.
import importlib
import os
import sys
from collections import OrderedDict

import torch.nn as nn
from torch.nn.modules.conv import _ConvNd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
_resnet = importlib.import_module("3204helpers_holocron_resnet")
conv_sequence = _resnet.conv_sequence
_ResBlock = _resnet._ResBlock


default_cfgs = {
    'darknet53': {'arch': 'DarknetV3',
                  'layout': [(1, 8, 16), (2, 16, None)],
                  'url': None},
}


def init_module(module, nonlinearity=None):
    for m in module.modules():
        if isinstance(m, _ConvNd):
            nn.init.kaiming_normal_(m.weight.data, mode='fan_out', nonlinearity=nonlinearity)
            if m.bias is not None:
                m.bias.data.zero_()
        elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
            m.weight.data.fill_(1.0)
            m.bias.data.zero_()


class DarkBlockV3(_ResBlock):

    def __init__(self, planes, mid_planes, act_layer=None, norm_layer=None, drop_layer=None, conv_layer=None):
        super().__init__(
            [*conv_sequence(planes, mid_planes, act_layer, norm_layer, drop_layer, conv_layer,
                            kernel_size=1, bias=False),
             *conv_sequence(mid_planes, planes, act_layer, norm_layer, drop_layer, conv_layer,
                            kernel_size=3, padding=1, bias=False)],
            None, act_layer)


class DarknetBodyV3(nn.Sequential):

    def __init__(self, layout, in_channels=3,
                 act_layer=None, norm_layer=None, drop_layer=None, conv_layer=None):

        if act_layer is None:
            act_layer = nn.LeakyReLU(0.1, inplace=True)
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d

        super().__init__(
            *conv_sequence(in_channels, 4, act_layer, norm_layer, drop_layer, conv_layer,
                           kernel_size=3, padding=1, bias=False),
            *conv_sequence(4, 8, act_layer, norm_layer, drop_layer, conv_layer,
                           kernel_size=3, padding=2, stride=2, bias=False),
            self._make_layer(*layout[0], act_layer, norm_layer, drop_layer, conv_layer),
            self._make_layer(*layout[1], act_layer, norm_layer, drop_layer, conv_layer),
        )

    @staticmethod
    def _make_layer(num_blocks, in_planes, out_planes=None,
                    act_layer=None, norm_layer=None, drop_layer=None, conv_layer=None):

        layers = [DarkBlockV3(in_planes, in_planes // 2, act_layer, norm_layer, drop_layer, conv_layer)
                  for _ in range(num_blocks)]
        if isinstance(out_planes, int):
            layers.extend(conv_sequence(in_planes, out_planes, act_layer, norm_layer, drop_layer, conv_layer,
                                        kernel_size=3, padding=1, stride=2, bias=False))

        return nn.Sequential(*layers)


class DarknetV3(nn.Sequential):
    def __init__(self, layout, num_classes=10, in_channels=3,
                 act_layer=None, norm_layer=None, drop_layer=None, conv_layer=None):

        super().__init__(OrderedDict([
            ('features', DarknetBodyV3(layout, in_channels, act_layer, norm_layer, drop_layer, conv_layer)),
            ('global_pool', nn.Sequential(nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten())),
            ('classifier', nn.Linear(layout[-1][-2], num_classes))]))

        init_module(self, 'leaky_relu')


def _darknet(arch, pretrained, progress, **kwargs):

    # Retrieve the correct Darknet layout type
    darknet_type = sys.modules[__name__].__dict__[default_cfgs[arch]['arch']]
    # Build the model
    model = darknet_type(default_cfgs[arch]['layout'], **kwargs)

    return model


def darknet53(pretrained=False, progress=True, **kwargs):
    return _darknet('darknet53', pretrained, progress, **kwargs)
