# source: https://github.com/easton-cau/SOTR/issues/19
# error: A
# The mask branch builds one nn.Sequential per level with add_module; the first level ends in
# a ReLU, and the forward adds the other levels into its output with +=.
import torch
import torch.nn as nn
import torch.nn.functional as F


def conv_gn_relu(in_ch, out_ch):
    return nn.Sequential(
        nn.Conv2d(in_ch, out_ch, 3, padding=1, bias=False),
        nn.GroupNorm(4, out_ch),
        nn.ReLU(inplace=True),
    )


class MaskBranch(nn.Module):
    def __init__(self, in_channels=8, mid_channels=8, num_levels=3):
        super().__init__()
        self.num_levels = num_levels
        self.convs_all_levels = nn.ModuleList()
        for i in range(self.num_levels):
            convs_per_level = nn.Sequential()
            if i == 0:
                convs_per_level.add_module('conv' + str(i), conv_gn_relu(in_channels, mid_channels))
                self.convs_all_levels.append(convs_per_level)
                continue
            for j in range(i):
                chn = in_channels + 2 if (j == 0 and i == num_levels - 1) else (in_channels if j == 0 else mid_channels)
                convs_per_level.add_module('conv' + str(j), conv_gn_relu(chn, mid_channels))
                convs_per_level.add_module('upsample' + str(j), nn.Upsample(scale_factor=2, mode='bilinear', align_corners=False))
            self.convs_all_levels.append(convs_per_level)
        self.conv_pred = nn.Conv2d(mid_channels, 4, 1)

    def forward(self, features):
        feature_add_all_level = self.convs_all_levels[0](features[0])
        for i in range(1, self.num_levels):
            mask_feat = features[i]
            if i == self.num_levels - 1:
                x_range = torch.linspace(-1, 1, mask_feat.shape[-1])
                y_range = torch.linspace(-1, 1, mask_feat.shape[-2])
                y, x = torch.meshgrid(y_range, x_range, indexing='ij')
                y = y.expand([mask_feat.shape[0], 1, -1, -1])
                x = x.expand([mask_feat.shape[0], 1, -1, -1])
                mask_feat = torch.cat([mask_feat, torch.cat([x, y], 1)], 1)
            feature_add_all_level += self.convs_all_levels[i](mask_feat)
        return self.conv_pred(feature_add_all_level)


def compute():
    torch.manual_seed(0)
    branch = MaskBranch()
    feats = [torch.randn(1, 8, 8, 8), torch.randn(1, 8, 4, 4), torch.randn(1, 8, 2, 2)]
    out = branch(feats)
    F.mse_loss(out, torch.zeros_like(out)).backward()
    return {n: p.grad for n, p in branch.named_parameters()}


if __name__ == "__main__":
    compute()
