# source: https://github.com/lyongo/NWPU-MOC/issues/4
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# NWPU-MOC (multi-category object counting in aerial images), models/FPN/FPN_Head.py: the lateral convs are the
# repo's Conv2d (conv + BN + ReLU), and the top-down path does
# `laterals[i - 1] += F.interpolate(laterals[i], size=prev_shape, mode='nearest')` on a list element, i.e. an
# in-place add into a ReLU output that ReluBackward saved ("[4, 128, 64, 64]], which is output 0 of
# ReluBackward0"). Setting inplace=False elsewhere did not help; the fix in the thread (confirmed by the reporter):
# `laterals[i - 1] = laterals[i - 1] + F.interpolate(...)`.
import torch
import torch.nn.functional as F
import torch.nn as nn


class FPN(nn.Module):
    def __init__(self, in_channels, out_channels, num_outs, start_level=0, end_level=-1,
                 extra_convs_on_inputs=True, bn=True):
        super(FPN, self).__init__()
        assert isinstance(in_channels, list)
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.num_ins = len(in_channels)
        self.num_outs = num_outs

        if end_level == -1:
            self.backbone_end_level = self.num_ins
            assert num_outs >= self.num_ins - start_level
        else:
            self.backbone_end_level = end_level
        self.start_level = start_level
        self.end_level = end_level
        self.extra_convs_on_inputs = extra_convs_on_inputs

        self.lateral_convs = nn.ModuleList()
        self.fpn_convs = nn.ModuleList()

        for i in range(self.start_level, self.backbone_end_level):
            l_conv = Conv2d(in_channels[i], out_channels, 1, bn=bn, bias=not bn, same_padding=True)
            fpn_conv = Conv2d(out_channels, out_channels, 3, bn=bn, bias=not bn, same_padding=True)
            self.lateral_convs.append(l_conv)
            self.fpn_convs.append(fpn_conv)
        self.init_weights()

    def init_weights(self):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.xavier_uniform_(m.weight)

    def forward(self, inputs):
        assert len(inputs) == len(self.in_channels)

        # build laterals
        laterals = [lateral_conv(inputs[i + self.start_level]) for i, lateral_conv in enumerate(self.lateral_convs)]

        # build top-down path
        used_backbone_levels = len(laterals)
        for i in range(used_backbone_levels - 1, 0, -1):
            prev_shape = laterals[i - 1].shape[2:]
            laterals[i - 1] += F.interpolate(laterals[i], size=prev_shape, mode='nearest')

        # build outputs
        outs = [self.fpn_convs[i](laterals[i]) for i in range(used_backbone_levels)]
        return tuple(outs)


class Conv2d(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, NL='relu', same_padding=False, bn=True,
                 bias=True):
        super(Conv2d, self).__init__()
        padding = int((kernel_size - 1) // 2) if same_padding else 0
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding=padding, bias=bias)
        self.bn = nn.BatchNorm2d(out_channels) if bn else None
        if NL == 'relu':
            self.relu = nn.ReLU(inplace=False)
        elif NL == 'prelu':
            self.relu = nn.PReLU()
        else:
            self.relu = None

    def forward(self, x):
        x = self.conv(x)
        if self.bn is not None:
            x = self.bn(x)
        if self.relu is not None:
            x = self.relu(x)
        return x


def compute():
    torch.manual_seed(0)
    in_channels = [4, 6, 8]
    fpn = FPN(in_channels, 8, 3)
    inputs = [torch.randn(2, c, s, s) for c, s in zip(in_channels, [16, 8, 4])]
    outs = fpn(inputs)
    # density-map style head: sum of per-level squared outputs
    loss = sum(o.pow(2).mean() for o in outs)
    loss.backward()
    return {n: p.grad for n, p in fpn.named_parameters()}


if __name__ == "__main__":
    compute()
