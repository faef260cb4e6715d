# helper for case 906 (reference, commit 84b1566 applied: `k = k.masked_fill(...)`, `v = v.masked_fill(...)`):
# se3_transformer_pytorch/se3_transformer_pytorch.py of lucidrains/se3-transformer-pytorch, reduced to what an AttentionBlockSE3 with GlobalLinearAttention runs: the norm-based
# nonlinearity NormSE3 (ungated scale), GlobalLinearAttention as it was, ResidualSE3, and the helpers they use.
# einops' rearrange is written out with view / permute / reshape; the fiber is a list of (degree, channels).
import torch
import torch.nn as nn
from torch import einsum


def exists(val):
    return val is not None


def map_values(fn, d):
    return {k: fn(v) for k, v in d.items()}


def rand_uniform(size, min_val, max_val):
    return torch.empty(size).uniform_(min_val, max_val)


def get_tensor_device_and_dtype(features):
    first_tensor = next(iter(features.items()))[1]
    return first_tensor.device, first_tensor.dtype


class ResidualSE3(nn.Module):
    """ only support instance where both Fibers are identical """
    def forward(self, x, res):
        out = {}
        for degree, tensor in x.items():
            degree = str(degree)
            out[degree] = tensor
            if degree in res:
                out[degree] = out[degree] + res[degree]
        return out


class NormSE3(nn.Module):
    def __init__(self, fiber, nonlin = nn.GELU(), eps = 1e-12):
        super().__init__()
        self.fiber = fiber
        self.nonlin = nonlin
        self.eps = eps
        self.transform = nn.ModuleDict()
        for degree, chan in fiber:
            self.transform[str(degree)] = nn.ParameterDict({
                'scale': nn.Parameter(torch.ones(1, 1, chan)),
                'bias': nn.Parameter(rand_uniform((1, 1, chan), -1e-3, 1e-3)),
            })

    def forward(self, features):
        output = {}
        for degree, t in features.items():
            norm = t.norm(dim = -1, keepdim = True).clamp(min = self.eps)
            phase = t / norm
            parameters = self.transform[degree]
            bias, scale = parameters['bias'], parameters['scale']
            transformed = norm.squeeze(-1)
            transformed = transformed * scale + bias
            transformed = self.nonlin(transformed).unsqueeze(-1)
            output[degree] = (transformed * phase).view(*t.shape)
        return output


class GlobalLinearAttention(nn.Module):
    def __init__(self, fiber, dim_head = 64, heads = 8, **kwargs):
        super().__init__()
        inner_dim = dim_head * heads
        self.scale = dim_head ** -0.5
        self.heads = heads
        self.to_qkv = nn.Linear(dict(fiber)[0], inner_dim * 3, bias = False)
        self.to_out = nn.Linear(inner_dim, dict(fiber)[0])

    def forward(self, features, edge_info, rel_dist, basis, global_feats = None, pos_emb = None, mask = None):
        h = self.heads
        device, dtype = get_tensor_device_and_dtype(features)

        x = features['0'] # only working on type 0 features for global linear attention
        x = x.squeeze(-1)

        q, k, v = self.to_qkv(x).chunk(3, dim = -1)
        q, k, v = map(lambda t: t.reshape(*t.shape[:2], h, -1).permute(0, 2, 1, 3), (q, k, v))

        if exists(mask):
            mask = mask[:, None, :, None]
            k = k.masked_fill(~mask, -torch.finfo(k.dtype).max)
            v = v.masked_fill(~mask, 0.)

        q = q.softmax(dim = -1)
        k = k.softmax(dim = -2)

        q *= self.scale

        context = einsum('b h n d, b h n e -> b h d e', k, v)
        attn_out = einsum('b h d e, b h n d -> b h n e', context, q)
        attn_out = attn_out.permute(0, 2, 1, 3).reshape(attn_out.shape[0], attn_out.shape[2], -1)
        attn_out = self.to_out(attn_out)

        out = map_values(lambda *args: 0, features)
        out['0'] = attn_out.unsqueeze(-1)
        return out


class AttentionBlockSE3(nn.Module):
    def __init__(self, fiber, dim_head = 24, heads = 8, attention_klass = GlobalLinearAttention, **kwargs):
        super().__init__()
        self.attn = attention_klass(fiber, heads = heads, dim_head = dim_head)
        self.prenorm = NormSE3(fiber)
        self.residual = ResidualSE3()

    def forward(self, features, edge_info, rel_dist, basis, global_feats = None, pos_emb = None, mask = None):
        res = features
        outputs = self.prenorm(features)
        outputs = self.attn(outputs, edge_info, rel_dist, basis, global_feats, pos_emb, mask)
        return self.residual(outputs, res)
