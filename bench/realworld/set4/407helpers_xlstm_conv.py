# xlstm package, xlstm/components/conv.py (NX-AI/xlstm), reduced: conv1d_step() as released and the
# CausalConv1d module's step() path that calls it.
from dataclasses import dataclass, field

import torch
from torch import nn


@dataclass
class CausalConv1dConfig:
    feature_dim: int = None  # F
    kernel_size: int = 4
    causal_conv_bias: bool = True
    channel_mixing: bool = False
    conv1d_kwargs: dict = field(default_factory=dict)


def conv1d_step(
    x: torch.Tensor,
    conv_state: torch.Tensor,
    conv1d_weight: torch.Tensor,
    conv1d_bias: torch.Tensor = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """
    x (torch.Tensor): (B, S, D); conv_state (torch.Tensor): (B, KS, D); conv1d_weight (torch.Tensor): (KS, D)
    """
    assert x.shape[1] == 1, f"x has sequence length {x.shape[1]} but it should be 1"
    conv_state.copy_(torch.roll(conv_state, shifts=-1, dims=1))
    conv_state[:, -1:, :] = x
    y = torch.sum(conv_state * conv1d_weight, dim=1, keepdim=True)
    if conv1d_bias is not None:
        y += conv1d_bias
    return y, conv_state


class CausalConv1d(nn.Module):
    def __init__(self, config: CausalConv1dConfig):
        super().__init__()
        self.config = config
        self.groups = self.config.feature_dim
        self.pad = self.config.kernel_size - 1
        self.conv = nn.Conv1d(
            in_channels=self.config.feature_dim,
            out_channels=self.config.feature_dim,
            kernel_size=self.config.kernel_size,
            padding=self.pad,
            groups=self.groups,
            bias=self.config.causal_conv_bias,
        )

    def step(self, x: torch.Tensor, conv_state: tuple = None):
        B, S, D = x.shape
        if conv_state is None:
            conv_state = (
                torch.zeros(
                    size=(B, self.config.kernel_size, D),
                    device=self.conv.weight.device,
                    dtype=self.conv.weight.dtype,
                ),
            )
        y, conv_state = conv1d_step(
            x,
            conv_state[0],
            self.conv.weight[:, 0, :].transpose(0, 1),  # rearrange(, "D 1 KS -> KS D")
            conv1d_bias=self.conv.bias if self.config.causal_conv_bias else None,
        )
        return y, (conv_state,)
