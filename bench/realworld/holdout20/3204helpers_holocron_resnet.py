# Library module for case 3204 (shared: the fix does not change it): frgfm/holocron, holocron/models/resnet.py
# (_ResBlock) and holocron/models/utils.py (conv_sequence) at the parent of commit a4cd000a (PR #70). Written anew at
# small size; _ResBlock.forward (`out = self.conv(x)`, `out += identity`, then the block's activation) and
# conv_sequence (conv, norm, optional DropBlock, then the activation module passed in, the same instance each time)
# follow the source. The ResNet classes themselves are left out.
import torch.nn as nn


def conv_sequence(in_channels, out_channels, act_layer=None, norm_layer=None, drop_layer=None,
                  conv_layer=None, bn_channels=None, **kwargs):

    if conv_layer is None:
        conv_layer = nn.Conv2d
    if bn_channels is None:
        bn_channels = out_channels

    conv_seq = [conv_layer(in_channels, out_channels, **kwargs)]

    if callable(norm_layer):
        conv_seq.append(norm_layer(bn_channels))
    if callable(drop_layer):
        conv_seq.append(drop_layer(p=0.1, block_size=3, inplace=True))
    if callable(act_layer):
        conv_seq.append(act_layer)

    return conv_seq


class _ResBlock(nn.Module):

    def __init__(self, convs, downsample=None, act_layer=None):
        super().__init__()

        if act_layer is None:
            act_layer = nn.ReLU(inplace=True)

        # Main branch
        self.conv = nn.Sequential(*convs)
        # Shortcut connection
        self.downsample = downsample
        self.activation = act_layer

    def forward(self, x):
        identity = x

        out = self.conv(x)

        if self.downsample is not None:
            identity = self.downsample(x)

        out += identity
        out = self.activation(out)

        return out
