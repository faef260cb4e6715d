# source: https://github.com/FrancescoSaverioZuppichini/glasses/issues/207
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# glasses ViT (glasses/models/classification/vit/__init__.py): the encoder block wraps each sub-layer in
# ResidualAdd, whose forward is `out = self.fn(x, **kwargs); x += out`. fn starts with nn.LayerNorm(x), which saved
# x for backward, so the residual addition into x breaks backward ("ViT inplace backward error", issue #207,
# filed by the maintainer). Fix, commit 8a1ef20 "done #207": `x = x + out`.
# The classes are the file's as of the issue (PatchEmbedding, ViTTokens, MultiHeadAttention, ResidualAdd,
# FeedForwardBlock, TransformerEncoderBlock), docstrings dropped. Stand-ins: einops is not installed here, so
# `rearrange`/`repeat`/`Rearrange` are small functions/modules doing exactly the file's patterns with
# reshape/permute/expand; the ViT wrapper and its token-pooling head are reduced to a LayerNorm + Linear on the
# class token; tiny sizes (8x8 images, patch 4, emb 8, 2 heads, depth 2).
import torch
from torch import nn
from torch import Tensor
import torch.nn.functional as F
from typing import List


def rearrange(t, pattern, **axes):
    # stand-in for einops.rearrange, limited to the patterns of this file
    if pattern == "b n (qkv h d) -> (qkv) b h n d":
        b, n, _ = t.shape
        qkv, h = axes["qkv"], axes["h"]
        return t.reshape(b, n, qkv, h, -1).permute(2, 0, 3, 1, 4)
    if pattern == "b h n d -> b n (h d)":
        b, h, n, d = t.shape
        return t.permute(0, 2, 1, 3).reshape(b, n, h * d)
    raise NotImplementedError(pattern)


def repeat(t, pattern, **axes):
    # stand-in for einops.repeat('() n e -> b n e')
    assert pattern == '() n e -> b n e'
    return t.expand(axes['b'], -1, -1)


class Rearrange(nn.Module):
    # stand-in for einops.layers.torch.Rearrange('b e (h) (w) -> b (h w) e')
    def __init__(self, pattern):
        super().__init__()
        assert pattern == 'b e (h) (w) -> b (h w) e'

    def forward(self, x):
        b, e, h, w = x.shape
        return x.reshape(b, e, h * w).permute(0, 2, 1)


class ViTTokens(nn.Module):
    def __init__(self, emb_size: int):
        super().__init__()
        self.cls = nn.Parameter(torch.randn(1, 1, emb_size))

    def forward(self, x: Tensor) -> List[Tensor]:
        b = x.shape[0]
        tokens = []
        for token in self.parameters():
            # for each token repeat itself over the batch dimension
            tokens.append(repeat(token, '() n e -> b n e', b=b))
        return tokens

    def __len__(self):
        return len(list(self.parameters()))

    # def __repr__(self):
    #     buffer = ""
    #     for name, token in self.named_parameters():
    #         buffer += f"({name}): {list(token.data.shape)}\n"
    #     return buffer


class PatchEmbedding(nn.Module):
    def __init__(self, in_channels: int = 3, patch_size: int = 16, emb_size: int = 768, img_size: int = 224, tokens: nn.Module = ViTTokens):
        self.patch_size = patch_size
        super().__init__()
        self.projection = nn.Sequential(
            # using a conv layer instead of a linear one -> performance gains
            nn.Conv2d(in_channels, emb_size,
                      kernel_size=patch_size, stride=patch_size),
            Rearrange('b e (h) (w) -> b (h w) e'),
        )
        self.tokens = tokens(emb_size)
        self.positions = nn.Parameter(torch.randn(
            (img_size // patch_size) ** 2 + len(self.tokens), emb_size))

    def forward(self, x: Tensor) -> Tensor:
        x = self.projection(x)
        # get the tokens
        tokens = self.tokens(x)
        # prepend the tokens to the input
        x = torch.cat([*tokens, x], dim=1)
        # add position embedding
        x += self.positions
        return x


class MultiHeadAttention(nn.Module):
    def __init__(self, emb_size: int = 768, num_heads: int = 12, att_drop_p: float = 0., projection_drop_p: float = 0., qkv_bias: bool = False):
        super().__init__()
        self.emb_size = emb_size
        self.num_heads = num_heads
        # fuse the queries, keys and values in one matrix
        self.qkv = nn.Linear(emb_size, emb_size * 3, bias=qkv_bias)
        self.att_drop = nn.Dropout(att_drop_p)
        self.projection = nn.Sequential(
            nn.Linear(emb_size, emb_size),
            nn.Dropout(projection_drop_p)
        )

        self.scaling = (self.emb_size // num_heads) ** -0.5

    def forward(self, x: Tensor, mask: Tensor = None) -> Tensor:
        # split keys, queries and values in num_heads
        qkv = rearrange(
            self.qkv(x), "b n (qkv h d) -> (qkv) b h n d", h=self.num_heads, qkv=3)

        queries, keys, values = qkv[0], qkv[1], qkv[2]
        # sum up over the last axis
        energy = torch.einsum('bhqd, bhkd -> bhqk',
                              queries, keys) * self.scaling
        if mask is not None:
            fill_value = torch.finfo(torch.float32).min
            energy.mask_fill(~mask, fill_value)

        att = F.softmax(energy, dim=-1)
        att = self.att_drop(att)
        # sum up over the third axis
        out = torch.einsum('bhal, bhlv -> bhav ', att, values)
        out = rearrange(out, "b h n d -> b n (h d)")
        out = self.projection(out)
        return out


class ResidualAdd(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x, **kwargs):
        out = self.fn(x, **kwargs)
        x += out
        return x


class FeedForwardBlock(nn.Sequential):
    def __init__(self, emb_size: int, expansion: int = 4, drop_p: float = 0., activation: nn.Module = nn.GELU):
        super().__init__(
            nn.Linear(emb_size, expansion * emb_size),
            activation(),
            nn.Dropout(drop_p),
            nn.Linear(expansion * emb_size, emb_size),
            nn.Dropout(drop_p)
        )


class TransformerEncoderBlock(nn.Sequential):
    def __init__(self,
                 emb_size: int = 768,
                 forward_expansion: int = 4,
                 forward_drop_p: float = 0.,
                 activation: nn.Module = nn.GELU,
                 ** kwargs):
        super().__init__(
            ResidualAdd(nn.Sequential(
                nn.LayerNorm(emb_size),
                MultiHeadAttention(emb_size, **kwargs)
            )),
            ResidualAdd(
                nn.Sequential(
                    nn.LayerNorm(emb_size),
                    FeedForwardBlock(
                        emb_size, expansion=forward_expansion, drop_p=forward_drop_p, activation=activation)),
            )
        )


def compute():
    torch.manual_seed(0)
    embedding = PatchEmbedding(in_channels=3, patch_size=4, emb_size=8, img_size=8)
    encoder = nn.Sequential(*[TransformerEncoderBlock(8, forward_expansion=2, num_heads=2) for _ in range(2)])
    head = nn.Sequential(nn.LayerNorm(8), nn.Linear(8, 5))
    model = nn.ModuleDict({"embedding": embedding, "encoder": encoder, "head": head})
    x = torch.randn(2, 3, 8, 8)
    logits = head(encoder(embedding(x))[:, 0])
    loss = F.cross_entropy(logits, torch.tensor([1, 4]))
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
