# mmclassification (now mmpretrain) mmcls/models/necks/hr_fuse.py after commit 517257a5 ("Fix a bug in backward"),
# which writes `feat = self.downsample_layers[i](feat) + self.increase_layers[i + 1](x[i + 1])`: HRFuseScales, copied.
# The culprit: `feat = self.downsample_layers[i](feat)` then `feat += self.increase_layers[i + 1](x[i + 1])`; the
# downsample layer is an mmcv ConvModule (conv, norm, ReLU with inplace=True by default), whose ReLU saved its output.
# Stand-ins: mmcv's ConvModule (conv -> norm -> activation, act_cfg ReLU inplace=True, the defaults), BaseModule
# (init_cfg ignored) and the NECKS registry; mmcls's resnet Bottleneck / ResLayer reduced to what
# ResLayer(Bottleneck, in_channels, out_channels, num_blocks=1, stride=1) builds (1x1-3x3-1x1 convs with BN and
# in-place ReLU, expansion 4, a 1x1 conv + BN downsample on the identity when the channels differ).
import torch.nn as nn


class ConvModule(nn.Module):  # stand-in for mmcv.cnn.bricks.ConvModule with the default order and activation
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, norm_cfg=None, bias=True,
                 act_cfg=dict(type='ReLU'), inplace=True):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, bias=bias)
        self.norm = nn.BatchNorm2d(out_channels, momentum=norm_cfg.get('momentum', 0.1)) if norm_cfg else None
        self.activate = nn.ReLU(inplace=inplace) if act_cfg is not None else None

    def forward(self, x):
        x = self.conv(x)
        if self.norm is not None:
            x = self.norm(x)
        if self.activate is not None:
            x = self.activate(x)
        return x


class BaseModule(nn.Module):  # stand-in for mmcv.runner.BaseModule
    def __init__(self, init_cfg=None):
        super().__init__()
        self.init_cfg = init_cfg


class Bottleneck(nn.Module):  # stand-in for mmcls.models.backbones.resnet.Bottleneck (style 'pytorch')
    expansion = 4

    def __init__(self, in_channels, out_channels, stride=1, downsample=None):
        super().__init__()
        mid = out_channels // self.expansion
        self.conv1 = nn.Conv2d(in_channels, mid, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(mid)
        self.conv2 = nn.Conv2d(mid, mid, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(mid)
        self.conv3 = nn.Conv2d(mid, out_channels, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        out = self.relu(out)
        return out


class ResLayer(nn.Sequential):  # stand-in for mmcls.models.backbones.resnet.ResLayer
    def __init__(self, block, in_channels, out_channels, num_blocks, stride=1):
        downsample = None
        if stride != 1 or in_channels != out_channels:
            downsample = nn.Sequential(nn.Conv2d(in_channels, out_channels, 1, stride=stride, bias=False),
                                       nn.BatchNorm2d(out_channels))
        layers = [block(in_channels, out_channels, stride=stride, downsample=downsample)]
        for _ in range(1, num_blocks):
            layers.append(block(out_channels, out_channels))
        super().__init__(*layers)


class HRFuseScales(BaseModule):
    """Global Average Pooling neck.

    Note that we use `view` to remove extra channel after pooling. We do not
    use `squeeze` as it will also remove the batch dimension when the tensor
    has a batch dimension of size 1, which can lead to unexpected errors.

    Args:
        dim (int): Dimensions of each sample channel, can be one of {1, 2, 3}.
            Default: 2
    """

    def __init__(self,
                 in_channels,
                 norm_cfg=dict(type='BN', momentum=0.1),
                 init_cfg=dict(type='Normal', layer='Linear', std=0.01)):
        super(HRFuseScales, self).__init__(init_cfg=init_cfg)
        self.in_channels = in_channels
        self.norm_cfg = norm_cfg

        block_type = Bottleneck
        out_channels = [128, 256, 512, 1024]

        # Increase the channels on each resolution
        # from C, 2C, 4C, 8C to 128, 256, 512, 1024
        increase_layers = []
        for i in range(len(in_channels)):
            increase_layers.append(
                ResLayer(
                    block_type,
                    in_channels=in_channels[i],
                    out_channels=out_channels[i],
                    num_blocks=1,
                    stride=1,
                ))
        self.increase_layers = nn.ModuleList(increase_layers)

        # Downsample feature maps in each scale.
        downsample_layers = []
        for i in range(len(in_channels) - 1):
            downsample_layers.append(
                ConvModule(
                    in_channels=out_channels[i],
                    out_channels=out_channels[i + 1],
                    kernel_size=3,
                    stride=2,
                    padding=1,
                    norm_cfg=self.norm_cfg,
                    bias=True,
                ))
        self.downsample_layers = nn.ModuleList(downsample_layers)

        # The final conv block before final classifier linear layer.
        self.final_layer = ConvModule(
            in_channels=out_channels[3],
            out_channels=2048,
            kernel_size=1,
            norm_cfg=self.norm_cfg,
            bias=True,
        )

    def forward(self, x):
        assert isinstance(x, tuple) and len(x) == len(self.in_channels)

        feat = self.increase_layers[0](x[0])
        for i in range(len(self.downsample_layers)):
            feat = self.downsample_layers[i](feat) + \
                self.increase_layers[i + 1](x[i + 1])

        return self.final_layer(feat)
