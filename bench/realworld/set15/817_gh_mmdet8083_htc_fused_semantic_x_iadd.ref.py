# reference fix for 817: the PR's change (also merged in PR #8439), `x = x + self.lateral_convs[i](feat)` in
# FusedSemanticHead.forward.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvModule(nn.Module):
    """mmcv.cnn.ConvModule stand-in: conv -> activation, `inplace` passed to the activation."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, conv_cfg=None, norm_cfg=None,
                 inplace=True):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, bias=True)
        self.activate = nn.ReLU(inplace=inplace)

    def forward(self, x):
        return self.activate(self.conv(x))


class FusedSemanticHead(nn.Module):
    r"""Multi-level fused semantic segmentation head."""

    def __init__(self,
                 num_ins,
                 fusion_level,
                 num_convs=4,
                 in_channels=256,
                 conv_out_channels=256,
                 num_classes=183,
                 conv_cfg=None,
                 norm_cfg=None,
                 loss_seg=dict(ignore_index=255, loss_weight=0.2)):
        super(FusedSemanticHead, self).__init__()
        self.num_ins = num_ins
        self.fusion_level = fusion_level
        self.num_convs = num_convs
        self.in_channels = in_channels
        self.conv_out_channels = conv_out_channels
        self.num_classes = num_classes
        self.conv_cfg = conv_cfg
        self.norm_cfg = norm_cfg
        self.fp16_enabled = False

        self.lateral_convs = nn.ModuleList()
        for i in range(self.num_ins):
            self.lateral_convs.append(
                ConvModule(
                    self.in_channels,
                    self.in_channels,
                    1,
                    conv_cfg=self.conv_cfg,
                    norm_cfg=self.norm_cfg,
                    inplace=False))

        self.convs = nn.ModuleList()
        for i in range(self.num_convs):
            in_channels = self.in_channels if i == 0 else conv_out_channels
            self.convs.append(
                ConvModule(
                    in_channels,
                    conv_out_channels,
                    3,
                    padding=1,
                    conv_cfg=self.conv_cfg,
                    norm_cfg=self.norm_cfg))
        self.conv_embedding = ConvModule(
            conv_out_channels,
            conv_out_channels,
            1,
            conv_cfg=self.conv_cfg,
            norm_cfg=self.norm_cfg)
        self.conv_logits = nn.Conv2d(conv_out_channels, self.num_classes, 1)
        self.loss_weight = loss_seg['loss_weight']
        self.criterion = nn.CrossEntropyLoss(ignore_index=loss_seg['ignore_index'])

    def forward(self, feats):
        x = self.lateral_convs[self.fusion_level](feats[self.fusion_level])
        fused_size = tuple(x.shape[-2:])
        for i, feat in enumerate(feats):
            if i != self.fusion_level:
                feat = F.interpolate(
                    feat, size=fused_size, mode='bilinear', align_corners=True)
                x = x + self.lateral_convs[i](feat)

        for i in range(self.num_convs):
            x = self.convs[i](x)

        mask_pred = self.conv_logits(x)
        x = self.conv_embedding(x)
        return mask_pred, x

    def loss(self, mask_pred, labels):
        labels = labels.squeeze(1).long()
        loss_semantic_seg = self.criterion(mask_pred, labels) * self.loss_weight
        return loss_semantic_seg


def compute():
    torch.manual_seed(0)
    head = FusedSemanticHead(num_ins=5, fusion_level=1, num_convs=2, in_channels=8, conv_out_channels=8,
                             num_classes=5)
    feats = [torch.randn(2, 8, s, s) for s in (32, 16, 8, 4, 2)]
    gt_semantic_seg = torch.randint(0, 5, (2, 1, 16, 16))
    mask_pred, semantic_feat = head(feats)
    loss = head.loss(mask_pred, gt_semantic_seg) + semantic_feat.pow(2).mean()
    loss.backward()
    out = {n: p.grad for n, p in head.named_parameters()}
    out["semantic_feat"] = semantic_feat.detach()
    return out


if __name__ == "__main__":
    compute()
