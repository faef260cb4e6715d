# Look-alike of p6 (written after the change): the attention layer hands back a copy of the
# state (`[s.clone() for s in state]`), so the next call writes the copy. A recurrent transformer layer run one token at a time, as the
# RNN-form linear-attention libraries structure it: an inner attention keeps running sums as its
# state and updates them in place, an attention layer and an encoder layer wrap it, each handing
# the state back to its caller; the user's loop threads the state through the layer.
import torch
from torch import nn


class InnerLinearAttention(nn.Module):
    def forward(self, q, k, v, state=None):
        q = nn.functional.elu(q) + 1
        k = nn.functional.elu(k) + 1
        if state is None:
            kv = q.new_zeros(q.shape[0], q.shape[1], v.shape[1])
            z = q.new_zeros(q.shape)
        else:
            kv, z = state
        kv += torch.einsum("bd,bm->bdm", k, v)
        z += k
        out = torch.einsum("bd,bdm->bm", q, kv) / torch.einsum("bd,bd->b", q, z)[:, None]
        return out, [kv, z]


class AttentionLayer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.inner = InnerLinearAttention()

    def forward(self, x, state=None):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        y, state = self.inner(q, k, v, state)
        return self.out(y), [s.clone() for s in state]


class EncoderLayer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.attention = AttentionLayer(d)
        self.norm = nn.LayerNorm(d)

    def forward(self, x, state=None):
        y, state = self.attention(x, state)
        return self.norm(x + y), state


def compute():
    torch.manual_seed(0)
    layer = EncoderLayer(4)
    xs = torch.randn(5, 2, 4)
    state = None
    outs = []
    for t in range(xs.shape[0]):
        y, state = layer(xs[t], state)
        outs.append(y)
    torch.stack(outs).pow(2).mean().backward()
    return layer.attention.qkv.weight.grad
