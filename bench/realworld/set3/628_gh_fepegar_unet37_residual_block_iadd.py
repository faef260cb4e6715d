# source: https://github.com/fepegar/unet/pull/37
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# fepegar/unet (2D/3D U-Net package) with residual=True: EncodingBlock.forward (unet/encoding.py) and
# DecodingBlock.forward (unet/decoding.py) compute `x = self.conv2(x)` (a ConvolutionalBlock ending in nn.ReLU,
# whose output ReluBackward0 saves) and then `x += connection`, so training fails with "one of the variables
# needed for gradient computation has been modified by an inplace operation" (issue #36). The merged PR #37
# (commit caace5c) changes both to `x = x + connection` in the two helper modules (628helpers_unet_encoding.py,
# 628helpers_unet_decoding.py; conv.py is 628helpers_unet_conv.py). This file is unet/unet.py; the harness builds
# UNet2D(residual=True, normalization='batch') with 3 encoding blocks and 4 first-layer channels.
from typing import Optional
import torch.nn as nn
import os
import sys
from importlib import import_module

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper modules
_encoding = import_module("628helpers_unet_encoding")
_decoding = import_module("628helpers_unet_decoding")
Encoder, EncodingBlock = _encoding.Encoder, _encoding.EncodingBlock
Decoder = _decoding.Decoder
ConvolutionalBlock = import_module("628helpers_unet_conv").ConvolutionalBlock

__all__ = ['UNet', 'UNet2D', 'UNet3D']


class UNet(nn.Module):
    def __init__(
            self,
            in_channels: int = 1,
            out_classes: int = 2,
            dimensions: int = 2,
            num_encoding_blocks: int = 5,
            out_channels_first_layer: int = 64,
            normalization: Optional[str] = None,
            pooling_type: str = 'max',
            upsampling_type: str = 'conv',
            preactivation: bool = False,
            residual: bool = False,
            padding: int = 0,
            padding_mode: str = 'zeros',
            activation: Optional[str] = 'ReLU',
            initial_dilation: Optional[int] = None,
            dropout: float = 0,
            monte_carlo_dropout: float = 0,
            ):
        super().__init__()
        depth = num_encoding_blocks - 1

        # Force padding if residual blocks
        if residual:
            padding = 1

        # Encoder
        self.encoder = Encoder(
            in_channels,
            out_channels_first_layer,
            dimensions,
            pooling_type,
            depth,
            normalization,
            preactivation=preactivation,
            residual=residual,
            padding=padding,
            padding_mode=padding_mode,
            activation=activation,
            initial_dilation=initial_dilation,
            dropout=dropout,
        )

        # Bottom (last encoding block)
        in_channels = self.encoder.out_channels
        if dimensions == 2:
            out_channels_first = 2 * in_channels
        else:
            out_channels_first = in_channels

        self.bottom_block = EncodingBlock(
            in_channels,
            out_channels_first,
            dimensions,
            normalization,
            pooling_type=None,
            preactivation=preactivation,
            residual=residual,
            padding=padding,
            padding_mode=padding_mode,
            activation=activation,
            dilation=self.encoder.dilation,
            dropout=dropout,
        )

        # Decoder
        if dimensions == 2:
            power = depth - 1
        elif dimensions == 3:
            power = depth
        in_channels = self.bottom_block.out_channels
        in_channels_skip_connection = out_channels_first_layer * 2**power
        num_decoding_blocks = depth
        self.decoder = Decoder(
            in_channels_skip_connection,
            dimensions,
            upsampling_type,
            num_decoding_blocks,
            normalization=normalization,
            preactivation=preactivation,
            residual=residual,
            padding=padding,
            padding_mode=padding_mode,
            activation=activation,
            initial_dilation=self.encoder.dilation,
            dropout=dropout,
        )

        # Monte Carlo dropout
        self.monte_carlo_layer = None
        if monte_carlo_dropout:
            dropout_class = getattr(nn, 'Dropout{}d'.format(dimensions))
            self.monte_carlo_layer = dropout_class(p=monte_carlo_dropout)

        # Classifier
        if dimensions == 2:
            in_channels = out_channels_first_layer
        elif dimensions == 3:
            in_channels = 2 * out_channels_first_layer
        self.classifier = ConvolutionalBlock(
            dimensions, in_channels, out_classes,
            kernel_size=1, activation=None,
        )

    def forward(self, x):
        skip_connections, encoding = self.encoder(x)
        encoding = self.bottom_block(encoding)
        x = self.decoder(skip_connections, encoding)
        if self.monte_carlo_layer is not None:
            x = self.monte_carlo_layer(x)
        return self.classifier(x)


class UNet2D(UNet):
    def __init__(self, *args, **user_kwargs):
        kwargs = {}
        kwargs['dimensions'] = 2
        kwargs['num_encoding_blocks'] = 5
        kwargs['out_channels_first_layer'] = 64
        kwargs.update(user_kwargs)
        super().__init__(*args, **kwargs)


class UNet3D(UNet):
    def __init__(self, *args, **user_kwargs):
        kwargs = {}
        kwargs['dimensions'] = 3
        kwargs['num_encoding_blocks'] = 4
        kwargs['out_channels_first_layer'] = 32
        kwargs['normalization'] = 'batch'
        kwargs.update(user_kwargs)
        super().__init__(*args, **kwargs)


def compute():
    torch.manual_seed(0)
    model = UNet2D(in_channels=1, out_classes=2, num_encoding_blocks=3, out_channels_first_layer=4,
                   normalization='batch', residual=True)
    x = torch.randn(2, 1, 16, 16)
    target = torch.randint(0, 2, (2, 16, 16))
    logits = model(x)
    loss = torch.nn.functional.cross_entropy(logits, target)
    loss.backward()
    return {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


if __name__ == "__main__":
    compute()
