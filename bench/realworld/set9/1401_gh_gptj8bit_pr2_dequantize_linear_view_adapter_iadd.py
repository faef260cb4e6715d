# source: https://github.com/gustavecortal/gpt-j-fine-tuning-example/pull/2
# pattern: augassign
# codemod_fixable: yes
# error: C
# ref_semantics: same
# GPT-J 6B 8-bit fine-tuning notebook (gustavecortal/gpt-j-fine-tuning-example, after hivemind's frozen 8-bit GPT-J):
# `DequantizeAndLinear`, a custom autograd Function, returns `F.linear(input, weights_deq, bias)`; on a 3-D input
# F.linear flattens, multiplies and views the result back, so the Function's output is a view of a tensor made
# inside it. `FrozenBNBLinear.forward` then adds the LoRA-style adapter in place, `output += self.adapter(input)`:
# "Output 0 of DequantizeAndLinearBackward is a view and is being modified inplace. This view was created inside a
# custom Function (or because an input was returned as-is) ... You can fix this by cloning the output of the custom
# Function." (issue #1). Fix (PR #2, merged): `return F.linear(input, weights_deq, bias).clone()` in the Function.
# Stand-ins: bitsandbytes' `dequantize_blockwise` / `quantize_blockwise` written in Python (blockwise absmax, a
# 256-entry code); the `custom_fwd` / `custom_bwd` decorators (autocast only) dropped; a two-layer toy in place of
# GPT-J, adapters added as in the notebook's `add_adapters` (second adapter layer zero-initialised); one step.
import torch
import torch.nn as nn
import torch.nn.functional as F


def quantize_blockwise(weight, code, blocksize=16):
    # stand-in for bitsandbytes.functional.quantize_blockwise (no autograd, as the CUDA kernel)
    weight = weight.detach()
    flat = weight.reshape(-1, blocksize)
    absmax = flat.abs().max(dim=1).values
    normed = flat / absmax.unsqueeze(1)
    idx = (normed.unsqueeze(-1) - code).abs().argmin(-1).to(torch.uint8)
    return idx.reshape(weight.shape), absmax


def dequantize_blockwise(weights_quantized, absmax, code, blocksize=16):
    # stand-in for bitsandbytes.functional.dequantize_blockwise
    values = code[weights_quantized.long()].reshape(-1, blocksize) * absmax.unsqueeze(1)
    return values.reshape(weights_quantized.shape)


class DequantizeAndLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input: torch.Tensor, weights_quantized: torch.ByteTensor,
                absmax: torch.FloatTensor, code: torch.FloatTensor, bias: torch.FloatTensor):
        weights_deq = dequantize_blockwise(weights_quantized, absmax=absmax, code=code)
        ctx.save_for_backward(input, weights_quantized, absmax, code)
        ctx._has_bias = bias is not None
        return F.linear(input, weights_deq, bias)

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor):
        assert not ctx.needs_input_grad[1] and not ctx.needs_input_grad[2] and not ctx.needs_input_grad[3]
        input, weights_quantized, absmax, code = ctx.saved_tensors
        # grad_output: [*batch, out_features]
        weights_deq = dequantize_blockwise(weights_quantized, absmax=absmax, code=code)
        grad_input = grad_output @ weights_deq
        grad_bias = grad_output.flatten(0, -2).sum(dim=0) if ctx._has_bias else None
        return grad_input, None, None, None, grad_bias


class FrozenBNBLinear(nn.Module):
    def __init__(self, weight, absmax, code, bias=None):
        assert isinstance(bias, nn.Parameter) or bias is None
        super().__init__()
        self.out_features, self.in_features = weight.shape
        self.register_buffer("weight", weight.requires_grad_(False))
        self.register_buffer("absmax", absmax.requires_grad_(False))
        self.register_buffer("code", code.requires_grad_(False))
        self.adapter = None
        self.bias = bias

    def forward(self, input):
        output = DequantizeAndLinear.apply(input, self.weight, self.absmax, self.code, self.bias)
        if self.adapter:
            output += self.adapter(input)
        return output

    @classmethod
    def from_linear(cls, linear: nn.Linear, code) -> "FrozenBNBLinear":
        weights_int8, state = quantize_blockwise(linear.weight, code)
        return cls(weights_int8, state, code, linear.bias)


def add_adapters(model, adapter_dim=4):
    assert adapter_dim > 0
    for module in model.modules():
        if isinstance(module, FrozenBNBLinear):
            module.adapter = nn.Sequential(
                nn.Linear(module.in_features, adapter_dim, bias=False),
                nn.Linear(adapter_dim, module.out_features, bias=False),
            )
            nn.init.zeros_(module.adapter[1].weight)


def compute():
    torch.manual_seed(0)
    code = torch.linspace(-1, 1, 256)
    model = nn.Sequential(
        FrozenBNBLinear.from_linear(nn.Linear(16, 32), code),
        nn.GELU(),
        FrozenBNBLinear.from_linear(nn.Linear(32, 8), code),
    )
    add_adapters(model)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=1e-2)
    x = torch.randn(2, 5, 16)
    target = torch.randn(2, 5, 8)
    out = {}
    for step in range(2):
        loss = F.mse_loss(model(x), target)
        opt.zero_grad()
        loss.backward()
        out[f"loss{step}"] = loss.detach()
        for name, p in model.named_parameters():
            if p.requires_grad:
                out[f"{name}.grad{step}"] = p.grad.clone()
        opt.step()
    return out


if __name__ == "__main__":
    compute()
