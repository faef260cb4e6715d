# source: https://github.com/OpenFirework/pytorch_solov2/issues/22
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# pytorch_solov2 (SOLOv2 instance segmentation without mmdet), modules/mask_feat_head.py, MaskFeatHead.forward:
# `feature_add_all_level = self.convs_all_levels[0](inputs[0])` (conv + GroupNorm + ReLU) and then, per FPN level,
# `feature_add_all_level += self.convs_all_levels[i](input_p)`: the first level's ReLU saved its output for
# backward and the in-place sums overwrite it: "[torch.FloatTensor [1, 128, 192, 120]], which is output 0 of
# ReluBackward0, is at version 3; expected version 0". The reporter's fix in the thread (other than downgrading
# torch): `feature_add_all_level = self.convs_all_levels[i](input_p) + feature_add_all_level`.
# Stand-ins: four random FPN features (8 channels; 16x16 down to 2x2) instead of the ResNet-FPN backbone,
# out_channels = num_classes = 32 (GroupNorm with 32 groups, as in the repo), a sum-of-squares loss on the
# predicted mask features instead of the SOLOv2 dice loss; torch.meshgrid gets indexing='ij' (its old default).
import torch
import torch.nn as nn


class MaskFeatHead(nn.Module):
    def __init__(self, in_channels, out_channels, start_level, end_level, num_classes, conv_cfg=None, norm_cfg=None):
        super(MaskFeatHead, self).__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.start_level = start_level
        self.end_level = end_level
        assert start_level >= 0 and end_level >= start_level
        self.num_classes = num_classes
        self.conv_cfg = conv_cfg
        self.norm_cfg = norm_cfg

        self.convs_all_levels = nn.ModuleList()
        for i in range(self.start_level, self.end_level + 1):
            convs_per_level = nn.Sequential()
            if i == 0:
                one_conv = nn.Sequential(
                    nn.Conv2d(self.in_channels, self.out_channels, 3, padding=1, bias=False),
                    nn.GroupNorm(num_channels=self.out_channels, num_groups=32),
                    nn.ReLU(inplace=False))
                convs_per_level.add_module('conv' + str(i), one_conv)
                self.convs_all_levels.append(convs_per_level)
                continue

            for j in range(i):
                if j == 0:
                    chn = self.in_channels + 2 if i == 3 else self.in_channels
                    one_conv = nn.Sequential(
                        nn.Conv2d(chn, self.out_channels, 3, padding=1, bias=False),
                        nn.GroupNorm(num_channels=self.out_channels, num_groups=32),
                        nn.ReLU(inplace=False))
                    convs_per_level.add_module('conv' + str(j), one_conv)
                    one_upsample = nn.Upsample(scale_factor=2, mode='bilinear', align_corners=False)
                    convs_per_level.add_module('upsample' + str(j), one_upsample)
                    continue

                one_conv = nn.Sequential(
                    nn.Conv2d(self.out_channels, self.out_channels, 3, padding=1, bias=False),
                    nn.GroupNorm(num_channels=self.out_channels, num_groups=32),
                    nn.ReLU(inplace=False))
                convs_per_level.add_module('conv' + str(j), one_conv)
                one_upsample = nn.Upsample(scale_factor=2, mode='bilinear', align_corners=False)
                convs_per_level.add_module('upsample' + str(j), one_upsample)

            self.convs_all_levels.append(convs_per_level)

        self.conv_pred = nn.Sequential(
            nn.Conv2d(self.out_channels, self.num_classes, 1, padding=0, bias=False),
            nn.GroupNorm(num_channels=self.out_channels, num_groups=32),
            nn.ReLU(inplace=True))

    def forward(self, inputs):
        assert len(inputs) == (self.end_level - self.start_level + 1)

        feature_add_all_level = self.convs_all_levels[0](inputs[0])
        for i in range(1, len(inputs)):
            input_p = inputs[i]
            if i == 3:
                input_feat = input_p
                x_range = torch.linspace(-1, 1, input_feat.shape[-1], device=input_feat.device)
                y_range = torch.linspace(-1, 1, input_feat.shape[-2], device=input_feat.device)
                y, x = torch.meshgrid(y_range, x_range, indexing='ij')
                y = y.expand([input_feat.shape[0], 1, -1, -1])
                x = x.expand([input_feat.shape[0], 1, -1, -1])
                coord_feat = torch.cat([x, y], 1)
                input_p = torch.cat([input_p, coord_feat], 1)

            feature_add_all_level += self.convs_all_levels[i](input_p)

        feature_pred = self.conv_pred(feature_add_all_level)
        return feature_pred


def compute():
    torch.manual_seed(0)
    head = MaskFeatHead(in_channels=8, out_channels=32, start_level=0, end_level=3, num_classes=32)
    inputs = [torch.randn(1, 8, s, s) for s in (16, 8, 4, 2)]
    pred = head(inputs)
    loss = pred.pow(2).mean()
    loss.backward()
    return {n: p.grad for n, p in head.named_parameters()}


if __name__ == "__main__":
    compute()
