# Library module for case 3401 (fixed: a355ce2 "remove in-place op", `out = out + x`): pyg-team/pytorch-frame torch_frame/nn/models/resnet.py at a355ce2
# (inside PR #234, merged as 5ec461f): FCResidualBlock and ResNet are the source's. Stand-ins: the StypeWiseFeature
# Encoder is reduced to the source's LinearEncoder.encode_forward over the numerical columns of a plain
# [batch_size, num_cols] tensor (the source takes a TensorFrame and also embeds categorical columns).
import math
from typing import Optional

import torch
from torch import Tensor
from torch.nn import (
    BatchNorm1d,
    Dropout,
    LayerNorm,
    Linear,
    Module,
    Parameter,
    ReLU,
    Sequential,
)


class LinearEncoder(Module):
    """Stand-in for StypeWiseFeatureEncoder with the source's LinearEncoder on numerical columns."""

    def __init__(self, out_channels: int, num_cols: int, mean: Tensor, std: Tensor):
        super().__init__()
        self.register_buffer("mean", mean)
        self.register_buffer("std", std)
        self.weight = Parameter(torch.empty(num_cols, out_channels))
        self.bias = Parameter(torch.empty(num_cols, out_channels))

    def reset_parameters(self):
        torch.nn.init.normal_(self.weight, std=0.01)
        torch.nn.init.zeros_(self.bias)

    def forward(self, feat: Tensor):
        # feat: [batch_size, num_cols]
        feat = (feat - self.mean) / self.std
        # [batch_size, num_cols], [channels, num_cols]
        # -> [batch_size, num_cols, channels]
        x_lin = torch.einsum("ij,jk->ijk", feat, self.weight)
        x = x_lin + self.bias
        return x, None


class FCResidualBlock(Module):
    r"""Fully connected residual block."""
    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        normalization: Optional[str] = "layernorm",
        dropout_prob: float = 0.0,
    ):
        super().__init__()
        self.lin1 = Linear(in_channels, out_channels)
        self.lin2 = Linear(out_channels, out_channels)
        self.relu = ReLU()
        self.dropout = Dropout(dropout_prob)

        if normalization == "batchnorm":
            self.norm1 = BatchNorm1d(out_channels)
            self.norm2 = BatchNorm1d(out_channels)
        elif normalization == "layernorm":
            self.norm1 = LayerNorm(out_channels)
            self.norm2 = LayerNorm(out_channels)
        else:
            self.norm1 = self.norm2 = None

        if in_channels != out_channels:
            self.shortcut = Linear(in_channels, out_channels)
        else:
            self.shortcut = None

    def reset_parameters(self):
        self.lin1.reset_parameters()
        self.lin2.reset_parameters()
        if self.norm1 is not None:
            self.norm1.reset_parameters()
        if self.norm2 is not None:
            self.norm2.reset_parameters()
        if self.shortcut is not None:
            self.shortcut.reset_parameters()

    def forward(self, x: Tensor) -> Tensor:
        out = self.lin1(x)
        out = self.norm1(out) if self.norm1 else out
        out = self.relu(out)
        out = self.dropout(out)

        out = self.lin2(out)
        out = self.norm2(out) if self.norm2 else out
        out = self.relu(out)
        out = self.dropout(out)

        if self.shortcut is not None:
            x = self.shortcut(x)

        out = out + x
        out = self.relu(out)

        return out


class ResNet(Module):
    r"""The ResNet model introduced in the
    `"Revisiting Deep Learning Models for Tabular Data"` paper (numerical columns only here)."""
    def __init__(
        self,
        channels: int,
        out_channels: int,
        num_layers: int,
        num_cols: int,
        col_mean: Tensor,
        col_std: Tensor,
        normalization: Optional[str] = "layernorm",
        dropout_prob: float = 0.2,
    ):
        super().__init__()
        if num_layers <= 0:
            raise ValueError(
                f"num_layers must be a positive integer (got {num_layers})")

        self.encoder = LinearEncoder(channels, num_cols, col_mean, col_std)

        in_channels = channels * num_cols
        self.backbone = Sequential(*[
            FCResidualBlock(
                in_channels if i == 0 else channels,
                channels,
                normalization=normalization,
                dropout_prob=dropout_prob,
            ) for i in range(num_layers)
        ])

        self.decoder = Sequential(
            LayerNorm(channels),
            ReLU(),
            Linear(channels, out_channels),
        )

        self.reset_parameters()

    def reset_parameters(self):
        self.encoder.reset_parameters()
        for block in self.backbone:
            block.reset_parameters()
        self.decoder[0].reset_parameters()
        self.decoder[-1].reset_parameters()

    def forward(self, tf: Tensor) -> Tensor:
        x, _ = self.encoder(tf)

        # Flattening the encoder output
        x = x.view(x.size(0), math.prod(x.shape[1:]))

        x = self.backbone(x)
        out = self.decoder(x)
        return out
