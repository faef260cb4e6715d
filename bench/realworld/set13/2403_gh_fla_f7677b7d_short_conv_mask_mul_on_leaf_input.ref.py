# source: https://github.com/fla-org/flash-linear-attention/commit/f7677b7d08111af6ce794796b57272e5aee05c86
# pattern: inplace_method
# codemod_fixable: yes
# error: B
# ref_semantics: same
# flash-linear-attention (fla), fla/modules/conv/short_conv.py at the fix's parent. ShortConvolution (a causal
# depthwise nn.Conv1d used in front of the q/k/v projections of linear-attention layers) zeroes the padded
# positions of its input before convolving: `x = x.mul_(mask.unsqueeze(-1))`. When the input is a leaf that
# requires grad (the new fused q/k/v short-conv test feeds such inputs with mask=True) the in-place multiply raises
# "a leaf Variable that requires grad is being used in an in-place operation". Fix (commit f7677b7d "Fix autograd
# in-place error in short-conv mask application"): `x = x * mask.unsqueeze(-1)` ("autograd-safe and produces
# identical values"); the fused_qkv_short_conv helper got the same change.
# Reduced (written anew, not copied): ShortConvolution's constructor and the masked, non-varlen, no-cache path of
# forward; stand-in: the Triton / CUDA `causal_conv1d` kernel is replaced by its plain PyTorch meaning (left-padded
# depthwise F.conv1d over [B, D, T], cut to T steps, then SiLU), which is what fla's torch reference computes.
# Harness (as the test): x = randn(B=2, T=8, D=6, requires_grad=True), a padding mask with the last steps of the
# second sequence zero, y.sum() backward. compute() returns y and the gradients of x and of the conv weight.
import torch
import torch.nn as nn
import torch.nn.functional as F


def causal_conv1d(x, weight, bias=None, residual=None, activation=None):
    # stand-in for fla.modules.conv.causal_conv1d.causal_conv1d (Triton): x [B, T, D], weight [D, W]
    W = weight.shape[-1]
    y = F.conv1d(F.pad(x.transpose(1, 2), (W - 1, 0)), weight.unsqueeze(1), bias, groups=weight.shape[0])
    y = y.transpose(1, 2)
    if activation in ('silu', 'swish'):
        y = F.silu(y)
    if residual is not None:
        y = y + residual
    return y, None


class ShortConvolution(nn.Conv1d):
    def __init__(self, hidden_size: int, kernel_size: int, bias: bool = False, activation: str = 'silu'):
        super().__init__(
            in_channels=hidden_size,
            out_channels=hidden_size,
            kernel_size=kernel_size,
            groups=hidden_size,
            bias=bias,
            padding=kernel_size - 1,
        )
        self.hidden_size = hidden_size
        self.activation = None
        if activation is not None:
            assert activation in ['silu', 'swish'], f"Activation `{activation}` not supported yet."
            self.activation = activation

    def forward(self, x, residual=None, mask=None, cache=None, output_final_state=False, cu_seqlens=None):
        B, T, *_ = x.shape
        if mask is not None:
            if cu_seqlens is not None:
                raise ValueError("`mask` and `cu_seqlens` cannot be provided at the same time")
            x = x * mask.unsqueeze(-1)
        return causal_conv1d(
            x=x,
            weight=self.weight.squeeze(1),
            bias=self.bias,
            residual=residual,
            activation=self.activation,
        )


def compute():
    torch.manual_seed(0)
    B, T, D, W = 2, 8, 6, 4
    conv = ShortConvolution(D, W)
    x = torch.randn(B, T, D, requires_grad=True)
    mask = torch.ones(B, T)
    mask[1, 5:] = 0
    y, _ = conv(x, mask=mask)
    y.sum().backward()
    return {"y": y.detach(), "x.grad": x.grad, "conv.weight.grad": conv.weight.grad}
