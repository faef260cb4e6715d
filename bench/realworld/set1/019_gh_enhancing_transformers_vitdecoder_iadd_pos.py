# source: https://github.com/thuanz123/enhancing-transformers/issues/11
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: differs
# ViTDecoder.forward does `token += self.de_pos_embedding` on its *input*; when two decoders consume the same
# quantized tokens, the second decoder's += corrupts the tensor the first decoder's LayerNorm saved.
# numpy/einops are not available in the eval env: the sincos table and rearranges are written with torch ops.
from collections import OrderedDict
from typing import Union, Tuple

import torch
import torch.nn as nn


def get_2d_sincos_pos_embed(embed_dim, grid_size):
    grid_size = (grid_size, grid_size) if type(grid_size) != tuple else grid_size
    grid_h = torch.arange(grid_size[0], dtype=torch.float32)
    grid_w = torch.arange(grid_size[1], dtype=torch.float32)
    grid = torch.meshgrid(grid_w, grid_h, indexing='xy')  # here w goes first
    grid = torch.stack(grid, dim=0)

    grid = grid.reshape([2, 1, grid_size[0], grid_size[1]])
    pos_embed = get_2d_sincos_pos_embed_from_grid(embed_dim, grid)

    return pos_embed


def get_2d_sincos_pos_embed_from_grid(embed_dim, grid):
    assert embed_dim % 2 == 0

    # use half of dimensions to encode grid_h
    emb_h = get_1d_sincos_pos_embed_from_grid(embed_dim // 2, grid[0])  # (H*W, D/2)
    emb_w = get_1d_sincos_pos_embed_from_grid(embed_dim // 2, grid[1])  # (H*W, D/2)

    emb = torch.cat([emb_h, emb_w], dim=1) # (H*W, D)
    return emb


def get_1d_sincos_pos_embed_from_grid(embed_dim, pos):
    assert embed_dim % 2 == 0
    omega = torch.arange(embed_dim // 2, dtype=torch.float64)
    omega /= embed_dim / 2.
    omega = 1. / 10000**omega  # (D/2,)

    pos = pos.reshape(-1).double()  # (M,)
    out = torch.einsum('m,d->md', pos, omega)  # (M, D/2), outer product

    emb_sin = torch.sin(out) # (M, D/2)
    emb_cos = torch.cos(out) # (M, D/2)

    emb = torch.cat([emb_sin, emb_cos], dim=1)  # (M, D)
    return emb


class PreNorm(nn.Module):
    def __init__(self, dim: int, fn: nn.Module) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fn = fn

    def forward(self, x: torch.FloatTensor, **kwargs) -> torch.FloatTensor:
        return self.fn(self.norm(x), **kwargs)


class FeedForward(nn.Module):
    def __init__(self, dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(dim, hidden_dim),
            nn.Tanh(),
            nn.Linear(hidden_dim, dim)
        )

    def forward(self, x: torch.FloatTensor) -> torch.FloatTensor:
        return self.net(x)


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int = 8, dim_head: int = 64) -> None:
        super().__init__()
        inner_dim = dim_head *  heads
        project_out = not (heads == 1 and dim_head == dim)

        self.heads = heads
        self.scale = dim_head ** -0.5

        self.attend = nn.Softmax(dim = -1)
        self.to_qkv = nn.Linear(dim, inner_dim * 3, bias = False)

        self.to_out = nn.Linear(inner_dim, dim) if project_out else nn.Identity()

    def forward(self, x: torch.FloatTensor) -> torch.FloatTensor:
        qkv = self.to_qkv(x).chunk(3, dim = -1)
        b, n, _ = x.shape
        # rearrange(t, 'b n (h d) -> b h n d', h = self.heads)
        q, k, v = map(lambda t: t.reshape(b, n, self.heads, -1).transpose(1, 2), qkv)

        attn = torch.matmul(q, k.transpose(-1, -2)) * self.scale
        attn = self.attend(attn)

        out = torch.matmul(attn, v)
        out = out.transpose(1, 2).reshape(b, n, -1)  # rearrange(out, 'b h n d -> b n (h d)')

        return self.to_out(out)


class Transformer(nn.Module):
    def __init__(self, dim: int, depth: int, heads: int, dim_head: int, mlp_dim: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList([])
        for idx in range(depth):
            layer = nn.ModuleList([PreNorm(dim, Attention(dim, heads=heads, dim_head=dim_head)),
                                   PreNorm(dim, FeedForward(dim, mlp_dim))])
            self.layers.append(layer)

    def forward(self, x: torch.FloatTensor) -> torch.FloatTensor:
        for attn, ff in self.layers:
            x = attn(x) + x
            x = ff(x) + x

        return x


class Rearrange(nn.Module):
    # stand-in for einops Rearrange('b (h w) c -> b c h w', h=h)
    def __init__(self, h):
        super().__init__()
        self.h = h

    def forward(self, x):
        b, n, c = x.shape
        return x.transpose(1, 2).reshape(b, c, self.h, n // self.h)


class ViTDecoder(nn.Module):
    def __init__(self, image_size: Union[Tuple[int, int], int], patch_size: Union[Tuple[int, int], int],
                 dim: int, depth: int, heads: int, mlp_dim: int, channels: int = 3, dim_head: int = 64) -> None:
        super().__init__()
        image_height, image_width = image_size if isinstance(image_size, tuple) \
                                    else (image_size, image_size)
        patch_height, patch_width = patch_size if isinstance(patch_size, tuple) \
                                    else (patch_size, patch_size)

        assert image_height % patch_height == 0 and image_width % patch_width == 0, 'Image dimensions must be divisible by the patch size.'
        de_pos_embedding = get_2d_sincos_pos_embed(dim, (image_height // patch_height, image_width // patch_width))

        self.num_patches = (image_height // patch_height) * (image_width // patch_width)
        self.patch_dim = channels * patch_height * patch_width

        self.transformer = Transformer(dim, depth, heads, dim_head, mlp_dim)
        self.de_pos_embedding = nn.Parameter(de_pos_embedding.float().unsqueeze(0), requires_grad=False)
        self.norm = nn.LayerNorm(dim)
        self.to_pixel = nn.Sequential(OrderedDict([
            ('reshape', Rearrange(h=image_height // patch_height)),
            ('conv_out', nn.ConvTranspose2d(dim, channels, kernel_size=patch_size, stride=patch_size))
        ]))

    def forward(self, token: torch.FloatTensor) -> torch.FloatTensor:
        token += self.de_pos_embedding
        x = self.transformer(token)
        x = self.norm(x)

        return self.to_pixel(x)


def compute():
    torch.manual_seed(0)
    cfg = dict(image_size=8, patch_size=4, dim=8, depth=1, heads=2, mlp_dim=16, dim_head=4)
    pre_quant = nn.Linear(8, 8)
    decoder_a = ViTDecoder(**cfg)
    decoder_b = ViTDecoder(**cfg)
    quant = pre_quant(torch.randn(2, 4, 8))
    rec_a = decoder_a(quant)
    rec_b = decoder_b(quant)  # the += here modifies quant a second time
    loss = rec_a.pow(2).mean() + rec_b.pow(2).mean()
    loss.backward()
    grads = {"pre_quant." + n: p.grad for n, p in pre_quant.named_parameters()}
    grads.update({"decoder_a." + n: p.grad for n, p in decoder_a.named_parameters() if p.requires_grad})
    grads.update({"decoder_b." + n: p.grad for n, p in decoder_b.named_parameters() if p.requires_grad})
    return grads


if __name__ == "__main__":
    compute()
