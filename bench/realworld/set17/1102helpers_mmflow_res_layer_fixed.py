# Reduced copy of mmflow/models/utils/res_layer.py (mmflow, September 2022) with PR #252 applied for case 1102: the
# BasicBlock that RAFT's encoders stack. Stand-ins: mmcv's build_conv_layer / build_norm_layer / build_activation_layer
# are nn.Conv2d / nn.BatchNorm2d (named norm1 / norm2 as mmcv names them) / nn.ReLU(); BaseModule is nn.Module; the
# Bottleneck block and the checkpointing branch's mmcv options are left out (with_cp kept).
import torch.nn as nn
import torch.utils.checkpoint as cp


class BasicBlock(nn.Module):
    """Basic block for ResNet."""

    expansion = 1

    def __init__(self, inplanes, planes, stride=1, dilation=1, downsample=None, style='pytorch', with_cp=False):
        super(BasicBlock, self).__init__()
        self.norm1_name, norm1 = 'bn1', nn.BatchNorm2d(planes)
        self.norm2_name, norm2 = 'bn2', nn.BatchNorm2d(planes)

        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride=stride, padding=1, dilation=dilation, bias=True)
        self.add_module(self.norm1_name, norm1)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=True)
        self.add_module(self.norm2_name, norm2)

        self.relu = nn.ReLU()
        self.downsample = downsample
        self.stride = stride
        self.dilation = dilation
        self.with_cp = with_cp

    @property
    def norm1(self):
        """nn.Module: normalization layer after the first convolution layer"""
        return getattr(self, self.norm1_name)

    @property
    def norm2(self):
        """nn.Module: normalization layer after the second convolution layer"""
        return getattr(self, self.norm2_name)

    def forward(self, x):
        """Forward function."""

        def _inner_forward(x):
            identity = x

            out = self.conv1(x)
            out = self.norm1(out)
            out = self.relu(out)

            out = self.conv2(out)
            out = self.norm2(out)
            out = self.relu(out)

            if self.downsample is not None:
                identity = self.downsample(x)

            out = out + identity

            return out

        if self.with_cp and x.requires_grad:
            out = cp.checkpoint(_inner_forward, x)
        else:
            out = _inner_forward(x)

        out = self.relu(out)

        return out
