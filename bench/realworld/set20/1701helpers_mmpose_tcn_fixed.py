# FIXED version: mmpose/models/backbones/tcn.py after commit 83fe8b9e5 (parent's header follows) ("Update TCN backbone: support dropout=0; fix
# error caused by adding residual in place"): BasicTemporalBlock (VideoPose3D's temporal block). The culprit:
# `out += res` on the output of `conv2`; with `dropout=0` the `nn.Dropout(0.)` in the Sequential returns its input
# as-is, so `out` is the output of ConvModule's ReLU (inplace=True, mmcv's default), which ReluBackward saved.
# Stand-ins: mmcv's ConvModule (conv -> norm -> ReLU(inplace=True), `bias='auto'` = no conv bias when a norm
# follows) is the small class below; `build_conv_layer(conv_cfg, ...)` is nn.Conv1d; the registry is left out.
import copy

import torch.nn as nn


class ConvModule(nn.Module):
    """Stand-in for mmcv.cnn.ConvModule with conv_cfg=Conv1d, norm_cfg=BN1d, act_cfg=ReLU (inplace=True)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, dilation=1, bias='auto',
                 conv_cfg=None, norm_cfg=None):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, stride=stride, dilation=dilation,
                              bias=False if bias == 'auto' else bias)
        self.bn = nn.BatchNorm1d(out_channels)
        self.activate = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.activate(self.bn(self.conv(x)))


def build_conv_layer(conv_cfg, in_channels, out_channels, kernel_size):
    return nn.Conv1d(in_channels, out_channels, kernel_size)


class BasicTemporalBlock(nn.Module):
    """Basic block for VideoPose3D."""

    def __init__(self,
                 in_channels,
                 out_channels,
                 mid_channels=1024,
                 kernel_size=3,
                 dilation=3,
                 dropout=0.25,
                 causal=False,
                 residual=True,
                 use_stride_conv=False,
                 conv_cfg=dict(type='Conv1d'),
                 norm_cfg=dict(type='BN1d')):
        # Protect mutable default arguments
        conv_cfg = copy.deepcopy(conv_cfg)
        norm_cfg = copy.deepcopy(norm_cfg)
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.mid_channels = mid_channels
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.dropout = dropout
        self.causal = causal
        self.residual = residual
        self.use_stride_conv = use_stride_conv

        self.pad = (kernel_size - 1) * dilation // 2
        if use_stride_conv:
            self.stride = kernel_size
            self.causal_shift = kernel_size // 2 if causal else 0
            self.dilation = 1
        else:
            self.stride = 1
            self.causal_shift = kernel_size // 2 * dilation if causal else 0

        self.conv1 = nn.Sequential(
            ConvModule(
                in_channels,
                mid_channels,
                kernel_size=kernel_size,
                stride=self.stride,
                dilation=self.dilation,
                bias='auto',
                conv_cfg=conv_cfg,
                norm_cfg=norm_cfg))
        self.conv2 = nn.Sequential(
            ConvModule(
                mid_channels,
                out_channels,
                kernel_size=1,
                bias='auto',
                conv_cfg=conv_cfg,
                norm_cfg=norm_cfg))

        if dropout > 0:
            self.dropout_layer = nn.Dropout(dropout)

        if residual and in_channels != out_channels:
            self.short_cut = build_conv_layer(conv_cfg, in_channels,
                                              out_channels, 1)
        else:
            self.short_cut = None

    def forward(self, x):
        """Forward function."""
        if self.use_stride_conv:
            assert self.causal_shift + self.kernel_size // 2 < x.shape[2]
        else:
            assert 0 <= self.pad + self.causal_shift < x.shape[2] - \
                self.pad + self.causal_shift <= x.shape[2]

        out = self.conv1(x)
        if self.dropout > 0:
            out = self.dropout_layer(out)

        out = self.conv2(out)
        if self.dropout > 0:
            out = self.dropout_layer(out)

        if self.residual:
            if self.use_stride_conv:
                res = x[:, :, self.causal_shift +
                        self.kernel_size // 2::self.kernel_size]
            else:
                res = x[:, :,
                        (self.pad + self.causal_shift):(x.shape[2] - self.pad +
                                                        self.causal_shift)]

            if self.short_cut is not None:
                res = self.short_cut(res)
            out = out + res

        return out
