# AQLM, fixed by commit a7d5627 "clone" (PR #26): the kernel returns `flat_output.reshape(output_sizes).clone()`.
# Otherwise as 1502helpers_aqlm_inference.py: QuantizedLinear and its `_QuantizedMatmul` autograd Function, reduced to the 1x16 codebook path.
# Stand-ins (marked): `code1x16_matmat`, the C++ kernel of inference_kernels/cuda_kernel.cpp, written in Python with
# the same steps (flat output, `flat_output *= scales`, bias, `flat_output.view(output_sizes)`: the returned tensor
# is a view of a tensor made inside the Function's forward); `code1x16_matmat_backward` for the backward kernel
# (the dequantized weight times the incoming gradient); get_int_dtype, kernel selection and the CPU permute of
# `prepare_matmul_op` dropped.
from typing import Optional

import torch
import torch.nn as nn


def dequantize_1x16(codes, codebooks, scales):
    # stand-in: codebook lookup of the 1x16 kernels, [out_features, in_features]
    num_out_groups, num_in_groups, _ = codes.shape
    weight = codebooks[0][codes[..., 0].long()]  # [out, in_groups, 1, in_group_size]
    return weight.reshape(num_out_groups, -1)


def code1x16_matmat(input, codes, codebooks, scales, bias):
    # stand-in for the C++ kernel (cuda_kernel.cpp, code1x16_matmat), same steps
    input_sizes = input.shape
    flat_input = input.reshape(-1, input.size(-1))
    flat_output = flat_input @ dequantize_1x16(codes, codebooks, scales).t()
    flat_output *= scales.flatten().unsqueeze(0)
    if bias is not None:
        flat_output += bias.unsqueeze(0)
    output_sizes = list(input_sizes)
    output_sizes.pop()
    output_sizes.append(-1)
    output = flat_output.reshape(output_sizes).clone()
    return output


def code1x16_matmat_backward(grad_output, codes, codebooks, scales, bias):
    # stand-in for the backward kernel: grad_input = grad_output @ (scales * W)
    weight = dequantize_1x16(codes, codebooks, scales) * scales.flatten().unsqueeze(1)
    return grad_output @ weight


class QuantizedLinear(nn.Module):
    def __init__(self, in_features, out_features, in_group_size, out_group_size, num_codebooks, nbits_per_codebook,
                 bias=True, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features

        assert self.in_features % in_group_size == 0
        assert self.out_features % out_group_size == 0
        num_out_groups = out_features // out_group_size
        num_in_groups = in_features // in_group_size
        self.out_group_size, self.in_group_size = out_group_size, in_group_size
        self.num_codebooks = num_codebooks
        self.nbits_per_codebook = nbits_per_codebook
        self.codebook_size = 2**nbits_per_codebook

        # CODES & CODEBOOKS
        self.codebooks = nn.Parameter(
            torch.randn((num_codebooks, self.codebook_size, out_group_size, in_group_size), **factory_kwargs),
            requires_grad=False,
        )  # [num_codebooks, codebook_size, out_group_size, in_group_size]
        self.codes = nn.Parameter(
            torch.randint(0, self.codebook_size, (num_out_groups, num_in_groups, num_codebooks), device=device,
                          dtype=torch.int32),
            requires_grad=False,
        )  #  [num_out_groups, num_in_groups, num_codebooks]

        # SCALES
        self.scales = nn.Parameter(
            torch.rand((num_out_groups, 1, 1, 1), **factory_kwargs) + 0.5, requires_grad=False
        )  #  [num_out_groups, 1, 1, 1]

        # BIAS
        if bias:
            self.bias = nn.Parameter(torch.randn(out_features, **factory_kwargs), requires_grad=False)
        else:
            self.register_parameter("bias", None)

        # MATMUL_OP
        self.matmul_op = None

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        if self.matmul_op is None:
            self.prepare_matmul_op(input)

        return self.matmul_op.apply(input, self.codes, self.codebooks, self.scales, self.bias)

    def prepare_matmul_op(self, input: torch.Tensor):
        forward_pass_kernel = code1x16_matmat
        backward_pass_kernel = code1x16_matmat_backward

        class _QuantizedMatmul(torch.autograd.Function):
            @staticmethod
            def forward(
                ctx,
                input: torch.Tensor,
                codes: torch.IntTensor,
                codebooks: torch.Tensor,
                scales: torch.Tensor,
                bias: Optional[torch.Tensor],
            ) -> torch.Tensor:
                ctx.save_for_backward(
                    input,
                    codes,
                    codebooks,
                    scales,
                    bias,
                )
                return forward_pass_kernel(
                    input,
                    codes,
                    codebooks,
                    scales,
                    bias,
                )

            @staticmethod
            def backward(ctx, grad_output: torch.Tensor) -> torch.Tensor:
                input, codes, codebooks, scales, bias = ctx.saved_tensors
                return (
                    backward_pass_kernel(
                        grad_output,
                        codes,
                        codebooks,
                        scales,
                        bias,
                    ),
                    None,
                    None,
                    None,
                    None,
                )

        self.matmul_op = _QuantizedMatmul
