# Library module for case 2803 (original).
# huggingface/pytorch-image-models (timm), timm/models/hgnet.py (PP-HGNet V1 / V2), read at the parent of commit 6862c98
# ("fix backward in hgnet", 2023-12-27). Written anew at small size (not copied): LearnableAffineBlock, ConvBNAct (conv,
# BatchNorm, ReLU, optional learnable affine), LightConvBNAct, ESEModule, HGBlock (its `x += identity` after the
# aggregation) and HGStage follow the source. Stand-ins: none needed beyond leaving out the stems, the classifier head,
# PPHGNet and the model registry (timm.layers / _builder / _registry imports).
import torch
import torch.nn as nn


class LearnableAffineBlock(nn.Module):
    def __init__(self, scale_value=1.0, bias_value=0.0):
        super().__init__()
        self.scale = nn.Parameter(torch.tensor([scale_value]))
        self.bias = nn.Parameter(torch.tensor([bias_value]))

    def forward(self, x):
        return self.scale * x + self.bias


class ConvBNAct(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, groups=1, use_act=True, use_lab=False):
        super().__init__()
        self.use_act = use_act
        self.use_lab = use_lab
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding=(kernel_size - 1) // 2,
                              groups=groups, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        self.act = nn.ReLU() if self.use_act else nn.Identity()
        self.lab = LearnableAffineBlock() if (self.use_act and self.use_lab) else nn.Identity()

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        x = self.act(x)
        x = self.lab(x)
        return x


class LightConvBNAct(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, groups=1, use_lab=False):
        super().__init__()
        self.conv1 = ConvBNAct(in_channels, out_channels, kernel_size=1, use_act=False, use_lab=use_lab)
        self.conv2 = ConvBNAct(out_channels, out_channels, kernel_size=kernel_size, groups=out_channels,
                               use_act=True, use_lab=use_lab)

    def forward(self, x):
        return self.conv2(self.conv1(x))


class ESEModule(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size=1, stride=1, padding=0)
        self.sigmoid = nn.Sigmoid()

    def forward(self, x):
        identity = x
        x = x.mean((2, 3), keepdim=True)
        x = self.conv(x)
        x = self.sigmoid(x)
        return torch.mul(identity, x)


class HGBlock(nn.Module):
    def __init__(self, in_channels, mid_channels, out_channels, layer_num, kernel_size=3, residual=False,
                 light_block=False, use_lab=False, agg='ese'):
        super().__init__()
        self.residual = residual
        self.layers = nn.ModuleList()
        for i in range(layer_num):
            if light_block:
                self.layers.append(LightConvBNAct(in_channels if i == 0 else mid_channels, mid_channels,
                                                  kernel_size=kernel_size, use_lab=use_lab))
            else:
                self.layers.append(ConvBNAct(in_channels if i == 0 else mid_channels, mid_channels,
                                             kernel_size=kernel_size, stride=1, use_lab=use_lab))
        # feature aggregation
        total_channels = in_channels + layer_num * mid_channels
        if agg == 'se':
            self.aggregation = nn.Sequential(
                ConvBNAct(total_channels, out_channels // 2, kernel_size=1, stride=1, use_lab=use_lab),
                ConvBNAct(out_channels // 2, out_channels, kernel_size=1, stride=1, use_lab=use_lab))
        else:
            self.aggregation = nn.Sequential(
                ConvBNAct(total_channels, out_channels, kernel_size=1, stride=1, use_lab=use_lab),
                ESEModule(out_channels))

    def forward(self, x):
        identity = x
        output = [x]
        for layer in self.layers:
            x = layer(x)
            output.append(x)
        x = torch.cat(output, dim=1)
        x = self.aggregation(x)
        if self.residual:
            x += identity
        return x


class HGStage(nn.Module):
    def __init__(self, in_channels, mid_channels, out_channels, block_num, layer_num, downsample=True, stride=2,
                 light_block=False, kernel_size=3, use_lab=False, agg='ese'):
        super().__init__()
        if downsample:
            self.downsample = ConvBNAct(in_channels, in_channels, kernel_size=3, stride=stride, groups=in_channels,
                                        use_act=False, use_lab=use_lab)
        else:
            self.downsample = nn.Identity()
        self.blocks = nn.Sequential(*[
            HGBlock(in_channels if i == 0 else out_channels, mid_channels, out_channels, layer_num,
                    residual=False if i == 0 else True, kernel_size=kernel_size, light_block=light_block,
                    use_lab=use_lab, agg=agg)
            for i in range(block_num)])

    def forward(self, x):
        x = self.downsample(x)
        x = self.blocks(x)
        return x
