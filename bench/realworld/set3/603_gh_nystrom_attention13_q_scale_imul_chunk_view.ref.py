# reference fix for 603 (the current nystrom-attention code): `q = q * self.scale`
from math import ceil

import torch
from torch import nn, einsum
import torch.nn.functional as F


def rearrange(t, pattern, **axes):
    """Stand-in for einops.rearrange, only for the patterns this module uses."""
    if pattern == 'b n (h d) -> b h n d':
        b, n, hd = t.shape
        h = axes['h']
        return t.reshape(b, n, h, hd // h).permute(0, 2, 1, 3)
    if pattern == 'b h n d -> b n (h d)':
        b, h, n, d = t.shape
        return t.permute(0, 2, 1, 3).reshape(b, n, h * d)
    if pattern == '... i j -> ... j i':
        return t.transpose(-1, -2)
    if pattern == 'i j -> () i j':
        return t.unsqueeze(0)
    if pattern == 'b n -> b () n':
        return t.unsqueeze(1)
    raise NotImplementedError(pattern)


def reduce(t, pattern, reduction, l):
    """Stand-in for einops.reduce('... (n l) d -> ... n d', 'sum', l=l)."""
    assert pattern == '... (n l) d -> ... n d' and reduction == 'sum'
    *lead, nl, d = t.shape
    return t.reshape(*lead, nl // l, l, d).sum(-2)


def exists(val):
    return val is not None


def moore_penrose_iter_pinv(x, iters=6):
    device = x.device

    abs_x = torch.abs(x)
    col = abs_x.sum(dim=-1)
    row = abs_x.sum(dim=-2)
    z = rearrange(x, '... i j -> ... j i') / (torch.max(col) * torch.max(row))

    I = torch.eye(x.shape[-1], device=device)
    I = rearrange(I, 'i j -> () i j')

    for _ in range(iters):
        xz = x @ z
        z = 0.25 * z @ (13 * I - (xz @ (15 * I - (xz @ (7 * I - xz)))))

    return z


class NystromAttention(nn.Module):
    def __init__(self, dim, dim_head=64, heads=8, num_landmarks=256, pinv_iterations=6, residual=True,
                 residual_conv_kernel=33, eps=1e-8, dropout=0.):
        super().__init__()
        self.eps = eps
        inner_dim = heads * dim_head

        self.num_landmarks = num_landmarks
        self.pinv_iterations = pinv_iterations

        self.heads = heads
        self.scale = dim_head ** -0.5
        self.to_qkv = nn.Linear(dim, inner_dim * 3, bias=False)

        self.to_out = nn.Sequential(nn.Linear(inner_dim, dim), nn.Dropout(dropout))

        self.residual = residual
        if residual:
            kernel_size = residual_conv_kernel
            padding = residual_conv_kernel // 2
            self.res_conv = nn.Conv2d(heads, heads, (kernel_size, 1), padding=(padding, 0), groups=heads, bias=False)

    def forward(self, x, mask=None, return_attn=False):
        b, n, _, h, m, iters, eps = *x.shape, self.heads, self.num_landmarks, self.pinv_iterations, self.eps

        remainder = n % m
        if remainder > 0:
            padding = m - (n % m)
            x = F.pad(x, (0, 0, padding, 0), value=0)
            if exists(mask):
                mask = F.pad(mask, (padding, 0), value=False)

        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = map(lambda t: rearrange(t, 'b n (h d) -> b h n d', h=h), (q, k, v))

        q = q * self.scale

        l = ceil(n / m)
        landmark_einops_eq = '... (n l) d -> ... n d'
        q_landmarks = reduce(q, landmark_einops_eq, 'sum', l=l)
        k_landmarks = reduce(k, landmark_einops_eq, 'sum', l=l)

        divisor = l
        q_landmarks /= divisor
        k_landmarks /= divisor

        einops_eq = '... i d, ... j d -> ... i j'
        sim1 = einsum(einops_eq, q, k_landmarks)
        sim2 = einsum(einops_eq, q_landmarks, k_landmarks)
        sim3 = einsum(einops_eq, q_landmarks, k)

        attn1, attn2, attn3 = map(lambda t: t.softmax(dim=-1), (sim1, sim2, sim3))
        attn2_inv = moore_penrose_iter_pinv(attn2, iters)

        out = (attn1 @ attn2_inv) @ (attn3 @ v)

        if self.residual:
            out += self.res_conv(v)

        out = rearrange(out, 'b h n d -> b n (h d)', h=h)
        out = self.to_out(out)
        out = out[:, -n:]

        if return_attn:
            attn = attn1 @ attn2_inv @ attn3
            return out, attn

        return out


def compute():
    torch.manual_seed(0)
    attn = NystromAttention(dim=16, dim_head=8, heads=2, num_landmarks=4, pinv_iterations=6, residual=True,
                            residual_conv_kernel=3)
    x = torch.randn(2, 8, 16, requires_grad=True)
    out = attn(x)
    out.pow(2).mean().backward()
    grads = {n: p.grad for n, p in attn.named_parameters()}
    grads["x"] = x.grad
    return grads


if __name__ == "__main__":
    compute()
