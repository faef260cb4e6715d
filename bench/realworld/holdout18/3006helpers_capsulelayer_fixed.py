# Library module for case 3006 (reference: the fix of commit ac87815, `probs = probs + delta_logits.exp()`).
# leftthomas/R2Plus1D-C3D (in 2017 a capsule-network repository; the name came later), capsulelayer.py (CapsuleConv2d,
# CapsuleLinear, route_conv2d, route_linear, softmax, squash), read at the parent of commit ac87815 ("fix the bug:
# probs += delta_logits.exp() is an inplace operation, so use probs = probs + delta_logits.exp() to replace it",
# 2017-12-01). Written anew at small size (not copied): the capsule convolution (padding, unfolding the input into
# windows of capsules, the per-window transformation matrices, routing), the capsule fully-connected layer, the routing
# of the convolution, which starts from `probs = Variable(torch.ones(...)).unsqueeze(dim=-1)` and updates it with
# `probs += delta_logits.exp()` (the statement at fault: the product `probs * input` of the same iteration saved
# `probs` for its backward), the routing-by-agreement of the linear layer, and squash, follow the source (including the
# PyTorch 0.3 idiom `Variable`).
# Stand-in: `F.softmax` gets an explicit `dim=-1` (the source leaves it implicit, which picks the same last dimension
# for these 2-D inputs).
# The CUDA branches are not taken on the CPU.
import torch
import torch.nn.functional as F
from torch import nn
from torch.autograd import Variable
from torch.nn.modules.utils import _pair
from torch.nn.parameter import Parameter


class CapsuleConv2d(nn.Module):
    """2D capsule convolution: input (N, C_in, H_in, W_in) -> output (N, C_out, H_out, W_out)."""

    def __init__(self, in_channels, out_channels, kernel_size, in_length, out_length, stride=1, padding=0,
                 num_iterations=3):
        super(CapsuleConv2d, self).__init__()
        if in_channels % in_length != 0:
            raise ValueError('in_channels must be divisible by in_length')
        if out_channels % out_length != 0:
            raise ValueError('out_channels must be divisible by out_length')
        kernel_size = _pair(kernel_size)
        stride = _pair(stride)
        padding = _pair(padding)
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.in_length = in_length
        self.out_length = out_length
        self.stride = stride
        self.padding = padding
        self.num_iterations = num_iterations
        self.weight = Parameter(
            torch.randn(out_channels // out_length, (in_channels // in_length) * kernel_size[0] * kernel_size[1],
                        out_length, in_length))

    def forward(self, input):
        if input.dim() != 4:
            raise ValueError("Expected 4D tensor as input, got {}D tensor instead.".format(input.dim()))
        N, C_in, H_in, W_in = input.size()
        H_out = 1 + (H_in + 2 * self.padding[0] - self.kernel_size[0]) // self.stride[0]
        W_out = 1 + (W_in + 2 * self.padding[1] - self.kernel_size[1]) // self.stride[1]
        input = F.pad(input, (self.padding[1], self.padding[1], self.padding[0], self.padding[0]))

        input_windows = input.unfold(2, self.kernel_size[0], self.stride[0]). \
            unfold(3, self.kernel_size[1], self.stride[1]).unfold(1, self.in_length, self.in_length)
        input_windows = input_windows.contiguous().view(*input_windows.size()[:-3], -1, input_windows.size(-1))
        input_windows = input_windows.view(*input_windows.size()[:2], -1, *input_windows.size()[-2:]).transpose(1, 2)
        input_windows = input_windows.contiguous().view(*input_windows.size()[:2], -1, input_windows.size(-1))

        input_windows = input_windows.unsqueeze(dim=-1).unsqueeze(dim=1)
        weight = self.weight.unsqueeze(dim=1).unsqueeze(dim=0)
        priors = weight.matmul(input_windows).squeeze(dim=-1)
        priors = priors.view(*priors.size()[:3], self.in_channels // self.in_length, -1, priors.size(-1))

        out = route_conv2d(priors, self.num_iterations)
        out = out.transpose(-1, -2)
        out = out.contiguous().view(out.size(0), -1, H_out, W_out)
        return out


class CapsuleLinear(nn.Module):
    """Fully connected capsules: input (N, in_capsules, in_length) -> output (N, out_capsules, out_length)."""

    def __init__(self, in_capsules, out_capsules, in_length, out_length, num_iterations=3):
        super(CapsuleLinear, self).__init__()
        self.in_capsules = in_capsules
        self.out_capsules = out_capsules
        self.num_iterations = num_iterations
        self.weight = Parameter(torch.randn(out_capsules, in_capsules, in_length, out_length))

    def forward(self, input):
        return route_linear(input, self.weight, self.num_iterations)


def route_conv2d(input, num_iterations):
    probs = Variable(torch.ones(*input.size()[:-1])).unsqueeze(dim=-1)
    if torch.cuda.is_available():
        probs = probs.cuda()
    for r in range(num_iterations):
        outputs = squash((probs * input).sum(dim=-2, keepdim=True).mean(dim=-3, keepdim=True))
        if r != num_iterations - 1:
            delta_logits = (input * outputs).sum(dim=-1, keepdim=True)
            probs = probs + delta_logits.exp()
    return outputs.squeeze(dim=-2).squeeze(dim=-2)


def route_linear(input, weight, num_iterations):
    priors = torch.matmul(input[None, :, :, None, :], weight[:, None, :, :, :])
    logits = Variable(torch.zeros(*priors.size()))
    if torch.cuda.is_available():
        logits = logits.cuda()
    for i in range(num_iterations):
        probs = softmax(logits, dim=2)
        outputs = squash((probs * priors).sum(dim=2, keepdim=True))
        if i != num_iterations - 1:
            delta_logits = (priors * outputs).sum(dim=-1, keepdim=True)
            logits = logits + delta_logits
    return outputs.squeeze(dim=2).squeeze(dim=2).transpose(0, 1)


def softmax(tensor, dim=1):
    transposed_input = tensor.transpose(dim, len(tensor.size()) - 1)
    softmaxed_output = F.softmax(transposed_input.contiguous().view(-1, transposed_input.size(-1)), dim=-1)
    return softmaxed_output.view(*transposed_input.size()).transpose(dim, len(tensor.size()) - 1)


def squash(tensor, dim=-1):
    squared_norm = (tensor ** 2).sum(dim=dim, keepdim=True)
    scale = squared_norm / (1 + squared_norm)
    return scale * tensor / torch.sqrt(squared_norm)
