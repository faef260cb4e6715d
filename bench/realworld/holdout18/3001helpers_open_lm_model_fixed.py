# Library module for case 3001 (reference: the fix of commit c4b03d6, the division under `with torch.no_grad():`).
# mlfoundations/open_lm, open_lm/model.py (Params, CustomAttn, Block, Transformer), read at the parent of commit
# c4b03d6 ("Divide weight in no_grad", 2023-10-10). Written anew at small size (not copied): the dataclass of model
# parameters, the attention block with its trunc-normal initialisation scaled by depth, the Block whose "gelu"
# feed-forward (the MosaicML MPT recipe) is initialised with kaiming_normal_ / zeros_ and then divides the second
# layer's weight by sqrt(2 * n_layers) with `self._ff_w2.weight.div_(...)` (the statement at fault: grad mode is on
# in __init__ and the weight is a Parameter), and the Transformer that stacks the blocks, follow the source.
# Stand-ins: attention is torch's scaled_dot_product_attention (the source calls xformers'
# memory_efficient_attention with a LowerTriangularMask), no rotary position embedding (RotaryWithCast), no "swiglu"
# feed-forward (xformers' SwiGLU), no Hugging Face hub mixin, no gradient checkpointing, no model-config registry.
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class Params:
    dim: int = 512
    n_layers: int = 8
    n_heads: int = 8
    vocab_size: int = -1
    norm_eps: float = 1e-5
    seq_len: int = 2048
    post_embed_norm: bool = False
    weight_tying: bool = False
    norm_type: type = nn.LayerNorm
    apply_qk_norm: bool = False
    ffn_type: str = "swiglu"


def sdpa_attn(queries, keys, values, is_causal):
    # queries / keys / values: [batch, seq_len, heads, head_dim], as the source's xformers call takes them
    out = F.scaled_dot_product_attention(
        queries.transpose(1, 2), keys.transpose(1, 2), values.transpose(1, 2), is_causal=is_causal
    )
    return out.transpose(1, 2)


class CustomAttn(nn.Module):
    def __init__(self, layer_id, args: Params):
        super().__init__()
        self.n_heads = args.n_heads
        self.head_dim = args.dim // args.n_heads
        self.in_proj = nn.Linear(args.dim, 3 * args.n_heads * self.head_dim, bias=False)
        self.out_proj = nn.Linear(args.n_heads * self.head_dim, args.dim, bias=False)
        self.attn_fn = sdpa_attn

        std = 1.0 / math.sqrt(args.dim)
        torch.nn.init.trunc_normal_(self.in_proj.weight, std=std, a=-3 * std, b=3 * std)
        std = std / math.sqrt(2 * (layer_id + 1))
        torch.nn.init.trunc_normal_(self.out_proj.weight, std=std, a=-3 * std, b=3 * std)

    def forward(self, x, is_causal=True):
        batchsize, seqlen, _ = x.shape
        queries, keys, vals = self.in_proj(x).chunk(3, dim=-1)
        queries = queries.view(batchsize, seqlen, self.n_heads, self.head_dim)
        keys = keys.view(batchsize, seqlen, self.n_heads, self.head_dim)
        vals = vals.view(batchsize, seqlen, self.n_heads, self.head_dim)
        output = self.attn_fn(queries, keys, vals, is_causal=is_causal)
        output = output.reshape(batchsize, seqlen, -1)
        return self.out_proj(output)


class Block(nn.Module):
    def __init__(self, layer_id, args: Params):
        super().__init__()
        self.n_heads = args.n_heads
        self.dim = args.dim
        self.head_dim = args.dim // args.n_heads
        self.attention = CustomAttn(layer_id, args)
        if args.ffn_type == "gelu":
            hidden_dim = args.dim * 4
            self._ff_w1 = nn.Linear(args.dim, hidden_dim, bias=True)
            self._ff_w2 = nn.Linear(hidden_dim, args.dim, bias=True)
            self.feed_forward = nn.Sequential(self._ff_w1, nn.GELU(approximate="none"), self._ff_w2)
        else:
            raise NotImplementedError(args.ffn_type)
        self.layer_id = layer_id
        self.attention_norm = args.norm_type(args.dim, eps=args.norm_eps)
        self.ffn_norm = args.norm_type(args.dim, eps=args.norm_eps)

        if args.ffn_type == "gelu":
            # MosaicML's default init for the MPT feed-forward
            torch.nn.init.kaiming_normal_(self._ff_w1.weight, a=0.0, mode="fan_in", nonlinearity="relu")
            torch.nn.init.kaiming_normal_(self._ff_w2.weight, a=0.0, mode="fan_in", nonlinearity="relu")
            torch.nn.init.zeros_(self._ff_w1.bias)
            torch.nn.init.zeros_(self._ff_w2.bias)
            # the second layer is a residual output: divide its init by sqrt(2 * n_layers)
            with torch.no_grad():
                self._ff_w2.weight.div_(math.sqrt(2 * args.n_layers))

    def forward(self, x):
        h = x + self.attention(self.attention_norm(x), is_causal=True)
        out = h + self.feed_forward(self.ffn_norm(h))
        return out


class Transformer(nn.Module):
    def __init__(self, params):
        super().__init__()
        self.params = params
        self.vocab_size = params.vocab_size
        self.n_layers = params.n_layers
        self.post_embed_norm = (
            params.norm_type(params.dim, eps=params.norm_eps) if params.post_embed_norm else nn.Identity()
        )
        self.tok_embeddings = nn.Embedding(params.vocab_size, params.dim)
        self.layers = torch.nn.ModuleList()
        for layer_id in range(params.n_layers):
            self.layers.append(Block(layer_id, params))
        self.norm = params.norm_type(params.dim, eps=params.norm_eps)
        self.output = nn.Linear(params.dim, params.vocab_size, bias=False)

        std = 1.0 / math.sqrt(params.dim)
        torch.nn.init.trunc_normal_(self.output.weight, std=std, a=-3 * std, b=3 * std)
        torch.nn.init.trunc_normal_(self.tok_embeddings.weight, std=std, a=-3 * std, b=3 * std)

    def forward(self, input):
        x = self.tok_embeddings(input)
        x = self.post_embed_norm(x)
        for layer in self.layers:
            x = layer(x)
        x = self.norm(x)
        return self.output(x)
