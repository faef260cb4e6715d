# reference fix for 707: merged PR #14: `q = q * self.scale`, `sim = sim + self.pos_emb(q)`, `x = x + shortcut`.
import torch
from torch import nn, einsum


def rearrange(t, pattern, **axes):
    # stand-in for einops.rearrange, limited to the patterns of this file
    pattern = " ".join(pattern.split())
    if pattern == 'b (h d) x y -> b h (x y) d':
        b, hd, x, y = t.shape
        h = axes['h']
        return t.reshape(b, h, hd // h, x, y).permute(0, 1, 3, 4, 2).reshape(b, h, x * y, hd // h)
    if pattern == 'b h (x y) d -> b (h d) x y':
        b, h, xy, d = t.shape
        x, y = axes['x'], axes['y']
        return t.reshape(b, h, x, y, d).permute(0, 1, 4, 2, 3).reshape(b, h * d, x, y)
    if pattern == 'h d -> h () d':
        return t.unsqueeze(1)
    if pattern == 'w d -> () w d':
        return t.unsqueeze(0)
    if pattern == 'h w d -> (h w) d':
        h, w, d = t.shape
        return t.reshape(h * w, d)
    raise NotImplementedError(pattern)

# positional embedding helpers

def pair(x):
    return (x, x) if not isinstance(x, tuple) else x

# positional embeddings

class AbsPosEmb(nn.Module):
    def __init__(
        self,
        fmap_size,
        dim_head
    ):
        super().__init__()
        height, width = pair(fmap_size)
        scale = dim_head ** -0.5
        self.height = nn.Parameter(torch.randn(height, dim_head) * scale)
        self.width = nn.Parameter(torch.randn(width, dim_head) * scale)

    def forward(self, q):
        emb = rearrange(self.height, 'h d -> h () d') + rearrange(self.width, 'w d -> () w d')
        emb = rearrange(emb, ' h w d -> (h w) d')
        logits = einsum('b h i d, j d -> b h i j', q, emb)
        return logits

# classes

class Attention(nn.Module):
    def __init__(
        self,
        *,
        dim,
        fmap_size,
        heads = 4,
        dim_head = 128,
        rel_pos_emb = False
    ):
        super().__init__()
        self.heads = heads
        self.scale = dim_head ** -0.5
        inner_dim = heads * dim_head

        self.to_qkv = nn.Conv2d(dim, inner_dim * 3, 1, bias = False)

        rel_pos_class = AbsPosEmb
        self.pos_emb = rel_pos_class(fmap_size, dim_head)

    def forward(self, fmap):
        heads, b, c, h, w = self.heads, *fmap.shape

        q, k, v = self.to_qkv(fmap).chunk(3, dim = 1)
        q, k, v = map(lambda t: rearrange(t, 'b (h d) x y -> b h (x y) d', h = heads), (q, k, v))

        q = q * self.scale

        sim = einsum('b h i d, b h j d -> b h i j', q, k)
        sim = sim + self.pos_emb(q)

        attn = sim.softmax(dim = -1)

        out = einsum('b h i j, b h j d -> b h i d', attn, v)
        out = rearrange(out, 'b h (x y) d -> b (h d) x y', x = h, y = w)
        return out

class BottleBlock(nn.Module):
    def __init__(
        self,
        *,
        dim,
        fmap_size,
        dim_out,
        proj_factor,
        downsample,
        heads = 4,
        dim_head = 128,
        rel_pos_emb = False,
        activation = nn.ReLU()
    ):
        super().__init__()

        # shortcut

        if dim != dim_out or downsample:
            kernel_size, stride, padding = (3, 2, 1) if downsample else (1, 1, 0)

            self.shortcut = nn.Sequential(
                nn.Conv2d(dim, dim_out, kernel_size, stride = stride, padding = padding, bias = False),
                nn.BatchNorm2d(dim_out),
                activation
            )
        else:
            self.shortcut = nn.Identity()

        # contraction and expansion

        attn_dim_in = dim_out // proj_factor
        attn_dim_out = heads * dim_head

        self.net = nn.Sequential(
            nn.Conv2d(dim, attn_dim_in, 1, bias = False),
            nn.BatchNorm2d(attn_dim_in),
            activation,
            Attention(
                dim = attn_dim_in,
                fmap_size = fmap_size,
                heads = heads,
                dim_head = dim_head,
                rel_pos_emb = rel_pos_emb
            ),
            nn.AvgPool2d((2, 2)) if downsample else nn.Identity(),
            nn.BatchNorm2d(attn_dim_out),
            activation,
            nn.Conv2d(attn_dim_out, dim_out, 1, bias = False),
            nn.BatchNorm2d(dim_out)
        )

        # init last batch norm gamma to zero (here: ones, so the attention path reaches the loss)

        nn.init.ones_(self.net[-1].weight)

        # final activation

        self.activation = activation

    def forward(self, x):
        shortcut = self.shortcut(x)
        x = self.net(x)
        x = x + shortcut
        return self.activation(x)


def compute():
    torch.manual_seed(0)
    block1 = BottleBlock(dim = 8, fmap_size = 4, dim_out = 16, proj_factor = 2, downsample = True,
                         heads = 2, dim_head = 4)
    block2 = BottleBlock(dim = 16, fmap_size = 2, dim_out = 16, proj_factor = 2, downsample = False,
                         heads = 2, dim_head = 4)
    x = torch.randn(2, 8, 4, 4)
    out = block2(block1(x))
    out.pow(2).mean().backward()
    grads = {"b1." + n: p.grad for n, p in block1.named_parameters()}
    grads.update({"b2." + n: p.grad for n, p in block2.named_parameters()})
    return grads


if __name__ == "__main__":
    compute()
