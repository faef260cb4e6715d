# Library module for case 3405: pyg-team/pytorch-frame torch_frame/nn/decoder/excelformer_decoder.py (and the Decoder
# base class of decoder.py) at the parent of 5a7791c, inside PR #26 ("ExcelFormer Implementation", merged as
# e0edc482): ExcelFormerDecoder is the source's.
from abc import ABC, abstractmethod
from typing import Any

from torch import Tensor
from torch.nn import Linear, Module, PReLU


class Decoder(Module, ABC):
    r"""Base class for decoder that transforms the input column-wise pytorch
    tensor into output tensor on which prediction head is applied."""
    @abstractmethod
    def forward(self, x: Tensor, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def reset_parameters(self):
        r"""Resets all learnable parameters of the module."""
        pass


class ExcelFormerDecoder(Decoder):
    r"""The ExcelFormer Prediction Head introduced in
        https://arxiv.org/pdf/2301.02819.pdf

    Args:
        in_channels (int): Input channel dimensionality
        out_channels (int): Output channel dimensionality
        num_cols (int): Number of columns.
    """
    def __init__(self, in_channels: int, out_channels: int, num_cols: int):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.lin_f = Linear(num_cols, self.out_channels)
        self.activation = PReLU()
        self.lin_d = Linear(self.in_channels, 1)
        self.reset_parameters()

    def reset_parameters(self):
        self.lin_f.reset_parameters()
        self.lin_d.reset_parameters()
        self.activation.weight.fill_(1.0)

    def forward(self, x: Tensor) -> Tensor:
        x = x.transpose(1, 2)
        x = self.lin_f(x)
        x = self.activation(x)
        x = self.lin_d(x.transpose(1, 2)).squeeze(2)
        return x
