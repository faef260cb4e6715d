# reference fix for 619 (mmsegmentation PR #1103): laterals[i - 1] = laterals[i - 1] + resize(...)
import torch
import torch.nn as nn
import torch.nn.functional as F


def resize(input, size=None, scale_factor=None, mode='nearest', align_corners=None, warning=True):
    return F.interpolate(input, size, scale_factor, mode, align_corners)


class ConvModule(nn.Module):
    """mmcv ConvModule (conv -> BN -> ReLU(inplace=True))."""

    def __init__(self, in_channels, out_channels, kernel_size, padding=0, conv_cfg=None, norm_cfg=None,
                 act_cfg=dict(type='ReLU'), inplace=True):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, bias=norm_cfg is None)
        self.bn = nn.BatchNorm2d(out_channels) if norm_cfg is not None else None
        self.activate = nn.ReLU(inplace=inplace) if act_cfg is not None else None

    def forward(self, x):
        x = self.conv(x)
        if self.bn is not None:
            x = self.bn(x)
        if self.activate is not None:
            x = self.activate(x)
        return x


class PPM(nn.ModuleList):
    def __init__(self, pool_scales, in_channels, channels, conv_cfg, norm_cfg, act_cfg, align_corners):
        super(PPM, self).__init__()
        self.pool_scales = pool_scales
        self.align_corners = align_corners
        for pool_scale in pool_scales:
            self.append(nn.Sequential(
                nn.AdaptiveAvgPool2d(pool_scale),
                ConvModule(in_channels, channels, 1, conv_cfg=conv_cfg, norm_cfg=norm_cfg, act_cfg=act_cfg)))

    def forward(self, x):
        ppm_outs = []
        for ppm in self:
            ppm_out = ppm(x)
            upsampled_ppm_out = resize(ppm_out, size=x.size()[2:], mode='bilinear', align_corners=self.align_corners)
            ppm_outs.append(upsampled_ppm_out)
        return ppm_outs


class UPerHead(nn.Module):
    def __init__(self, in_channels, channels, num_classes, pool_scales=(1, 2, 3, 6), norm_cfg=dict(type='BN'),
                 act_cfg=dict(type='ReLU'), align_corners=False):
        super(UPerHead, self).__init__()
        self.in_channels, self.channels, self.align_corners = in_channels, channels, align_corners
        self.conv_cfg, self.norm_cfg, self.act_cfg = None, norm_cfg, act_cfg
        self.psp_modules = PPM(pool_scales, self.in_channels[-1], self.channels, conv_cfg=self.conv_cfg,
                               norm_cfg=self.norm_cfg, act_cfg=self.act_cfg, align_corners=self.align_corners)
        self.bottleneck = ConvModule(self.in_channels[-1] + len(pool_scales) * self.channels, self.channels, 3,
                                     padding=1, conv_cfg=self.conv_cfg, norm_cfg=self.norm_cfg, act_cfg=self.act_cfg)
        self.lateral_convs = nn.ModuleList()
        self.fpn_convs = nn.ModuleList()
        for in_channels in self.in_channels[:-1]:  # skip the top layer
            l_conv = ConvModule(in_channels, self.channels, 1, conv_cfg=self.conv_cfg, norm_cfg=self.norm_cfg,
                                act_cfg=self.act_cfg, inplace=False)
            fpn_conv = ConvModule(self.channels, self.channels, 3, padding=1, conv_cfg=self.conv_cfg,
                                  norm_cfg=self.norm_cfg, act_cfg=self.act_cfg, inplace=False)
            self.lateral_convs.append(l_conv)
            self.fpn_convs.append(fpn_conv)
        self.fpn_bottleneck = ConvModule(len(self.in_channels) * self.channels, self.channels, 3, padding=1,
                                         conv_cfg=self.conv_cfg, norm_cfg=self.norm_cfg, act_cfg=self.act_cfg)
        self.conv_seg = nn.Conv2d(channels, num_classes, kernel_size=1)

    def psp_forward(self, inputs):
        """Forward function of PSP module."""
        x = inputs[-1]
        psp_outs = [x]
        psp_outs.extend(self.psp_modules(x))
        psp_outs = torch.cat(psp_outs, dim=1)
        output = self.bottleneck(psp_outs)
        return output

    def forward(self, inputs):
        """Forward function."""
        # build laterals
        laterals = [
            lateral_conv(inputs[i])
            for i, lateral_conv in enumerate(self.lateral_convs)
        ]

        laterals.append(self.psp_forward(inputs))

        # build top-down path
        used_backbone_levels = len(laterals)
        for i in range(used_backbone_levels - 1, 0, -1):
            prev_shape = laterals[i - 1].shape[2:]
            laterals[i - 1] = laterals[i - 1] + resize(
                laterals[i],
                size=prev_shape,
                mode='bilinear',
                align_corners=self.align_corners)

        # build outputs
        fpn_outs = [
            self.fpn_convs[i](laterals[i])
            for i in range(used_backbone_levels - 1)
        ]
        # append psp feature
        fpn_outs.append(laterals[-1])

        for i in range(used_backbone_levels - 1, 0, -1):
            fpn_outs[i] = resize(
                fpn_outs[i],
                size=fpn_outs[0].shape[2:],
                mode='bilinear',
                align_corners=self.align_corners)
        fpn_outs = torch.cat(fpn_outs, dim=1)
        output = self.fpn_bottleneck(fpn_outs)
        output = self.conv_seg(output)
        return output


def compute():
    torch.manual_seed(0)
    stem = nn.ModuleList([nn.Conv2d(3, c, 3, stride=s, padding=1) for c, s in ((4, 4), (8, 8), (8, 16), (16, 32))])
    head = UPerHead(in_channels=[4, 8, 8, 16], channels=8, num_classes=3)
    img = torch.randn(2, 3, 64, 64)
    feats = [m(img) for m in stem]
    seg_logits = head(feats)
    gt = torch.randint(0, 3, (2, 64, 64))
    loss = F.cross_entropy(resize(seg_logits, size=(64, 64), mode='bilinear', align_corners=False), gt)
    loss.backward()
    grads = {"head." + n: p.grad for n, p in head.named_parameters()}
    grads.update({"stem." + n: p.grad for n, p in stem.named_parameters()})
    return grads


if __name__ == "__main__":
    compute()
