# source: https://github.com/qianyu-dlut/MVANet/issues/2
# pattern: inplace_kwarg
# codemod_fixable: yes
# error: A
# ref_semantics: same
# MVANet (multi-view aggregation for dichotomous image segmentation), model/MVANet.py: MVANet.__init__ ends with
# `for m in self.modules(): if isinstance(m, nn.ReLU) or isinstance(m, nn.Dropout): m.inplace = True`, so the
# feed-forward step of MCLM, `g_hw_b_c + self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(
# g_hw_b_c)))))` with activation = F.relu, runs an in-place dropout over the ReLU output that ReLU saved for
# backward; training fails ("Relu variables has been modified by an inplace operation", issue #2). The
# maintainer's fix (commit a7107e0, "We have committed the corrected version"): `self.activation(...).clone()` before
# the dropout, as the l-branch of the same module already had.
# Stand-ins: einops.rearrange is written out with permute/reshape; PositionEmbeddingSine is built on the CPU; the Swin
# backbone and decoder are replaced by two 1x1 convolutions producing the 4 local patches and the global view; d_model
# 16, 2 heads, 8 x 8 global map; loss: squared error of a 1x1-conv side output against a fixed mask.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def get_activation_fn(activation):
    """Return an activation function given a string"""
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(F"activation should be relu/gelu, not {activation}.")


def to_hw_b_c(x):  # stand-in for rearrange(x, 'b c h w -> (h w) b c')
    b, c, h, w = x.shape
    return x.permute(2, 3, 0, 1).reshape(h * w, b, c)


def locs_to_image(l):  # stand-in for rearrange(l, '(hg wg b) c h w -> b c (hg h) (wg w)', hg=2, wg=2)
    n, c, h, w = l.shape
    b = n // 4
    return l.view(2, 2, b, c, h, w).permute(2, 3, 0, 4, 1, 5).reshape(b, c, 2 * h, 2 * w)


class PositionEmbeddingSine:
    def __init__(self, num_pos_feats=64, temperature=10000, normalize=False, scale=None):
        self.num_pos_feats = num_pos_feats
        self.temperature = temperature
        self.normalize = normalize
        self.scale = 2 * math.pi if scale is None else scale
        self.dim_t = torch.arange(0, self.num_pos_feats, dtype=torch.float32)

    def __call__(self, b, h, w):
        mask = torch.zeros([b, h, w], dtype=torch.bool)
        not_mask = ~mask
        y_embed = not_mask.cumsum(dim=1, dtype=torch.float32)
        x_embed = not_mask.cumsum(dim=2, dtype=torch.float32)
        if self.normalize:
            eps = 1e-6
            y_embed = (y_embed - 0.5) / (y_embed[:, -1:, :] + eps) * self.scale
            x_embed = (x_embed - 0.5) / (x_embed[:, :, -1:] + eps) * self.scale
        dim_t = self.temperature ** (2 * (self.dim_t // 2) / self.num_pos_feats)
        pos_x = x_embed[:, :, :, None] / dim_t
        pos_y = y_embed[:, :, :, None] / dim_t
        pos_x = torch.stack((pos_x[:, :, :, 0::2].sin(), pos_x[:, :, :, 1::2].cos()), dim=4).flatten(3)
        pos_y = torch.stack((pos_y[:, :, :, 0::2].sin(), pos_y[:, :, :, 1::2].cos()), dim=4).flatten(3)
        return torch.cat((pos_y, pos_x), dim=3).permute(0, 3, 1, 2)


class MCLM(nn.Module):
    def __init__(self, d_model, num_heads, pool_ratios=[1, 4, 8]):
        super(MCLM, self).__init__()
        self.attention = nn.ModuleList([nn.MultiheadAttention(d_model, num_heads, dropout=0.1) for _ in range(5)])
        self.linear1 = nn.Linear(d_model, d_model * 2)
        self.linear2 = nn.Linear(d_model * 2, d_model)
        self.linear3 = nn.Linear(d_model, d_model * 2)
        self.linear4 = nn.Linear(d_model * 2, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(0.1)
        self.dropout1 = nn.Dropout(0.1)
        self.dropout2 = nn.Dropout(0.1)
        self.activation = get_activation_fn('relu')
        self.pool_ratios = pool_ratios
        self.p_poses = []
        self.g_pos = None
        self.positional_encoding = PositionEmbeddingSine(num_pos_feats=d_model // 2, normalize=True)

    def forward(self, l, g):
        b, c, h, w = l.size()
        concated_locs = locs_to_image(l)
        self.p_poses = []
        pools = []
        for pool_ratio in self.pool_ratios:
            tgt_hw = (round(h / pool_ratio), round(w / pool_ratio))
            pool = F.adaptive_avg_pool2d(concated_locs, tgt_hw)
            pools.append(to_hw_b_c(pool))
            if self.g_pos is None:
                pos_emb = self.positional_encoding(pool.shape[0], pool.shape[2], pool.shape[3])
                self.p_poses.append(to_hw_b_c(pos_emb))
        pools = torch.cat(pools, 0)
        if self.g_pos is None:
            self.p_poses = torch.cat(self.p_poses, dim=0)
            pos_emb = self.positional_encoding(g.shape[0], g.shape[2], g.shape[3])
            self.g_pos = to_hw_b_c(pos_emb)

        # attention between glb (q) & multisensory concated-locs (k,v)
        g_hw_b_c = to_hw_b_c(g)
        g_hw_b_c = g_hw_b_c + self.dropout1(self.attention[0](g_hw_b_c + self.g_pos, pools + self.p_poses, pools)[0])
        g_hw_b_c = self.norm1(g_hw_b_c)
        g_hw_b_c = g_hw_b_c + self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(g_hw_b_c)))))
        g_hw_b_c = self.norm2(g_hw_b_c)

        # attention between origin locs (q) & freashed glb (k,v)
        l_hw_b_c = to_hw_b_c(l)
        # stand-in for the two rearranges: (ng h) (nw w) b c -> (h w) (ng nw b) c
        _g = g_hw_b_c.view(2, h // 2, 2, w // 2, 1, c).permute(1, 3, 0, 2, 4, 5).reshape(h * w // 4, 4, c)
        outputs_re = []
        for i, (_l, _gi) in enumerate(zip(l_hw_b_c.chunk(4, dim=1), _g.chunk(4, dim=1))):
            outputs_re.append(self.attention[i + 1](_l, _gi, _gi)[0])
        outputs_re = torch.cat(outputs_re, 1)

        l_hw_b_c = l_hw_b_c + self.dropout1(outputs_re)
        l_hw_b_c = self.norm1(l_hw_b_c)
        l_hw_b_c = l_hw_b_c + self.dropout2(self.linear4(self.dropout(self.activation(self.linear3(l_hw_b_c)).clone())))
        l_hw_b_c = self.norm2(l_hw_b_c)

        l = torch.cat((l_hw_b_c, g_hw_b_c), 1)
        return l.reshape(h, w, 5, c).permute(2, 3, 0, 1)


class MVANet(nn.Module):
    def __init__(self, emb_dim=16):
        super().__init__()
        self.loc_proj = nn.Conv2d(3, emb_dim, 1)  # stand-in for the Swin backbone on the 4 patches
        self.glb_proj = nn.Conv2d(3, emb_dim, 1)  # stand-in for the Swin backbone on the global view
        self.multifieldcrossatt = MCLM(emb_dim, 2, [1, 4, 8])
        self.sideout = nn.Conv2d(emb_dim, 1, 1)
        for m in self.modules():
            if isinstance(m, nn.ReLU) or isinstance(m, nn.Dropout):
                m.inplace = True

    def forward(self, x):
        b = x.shape[0]
        h, w = x.shape[2] // 2, x.shape[3] // 2
        patches = x.view(b, 3, 2, h, 2, w).permute(2, 4, 0, 1, 3, 5).reshape(4 * b, 3, h, w)
        loc = self.loc_proj(patches)
        glb = self.glb_proj(F.interpolate(x, size=(h, w), mode='bilinear', align_corners=False))
        e5 = self.multifieldcrossatt(loc, glb)
        return self.sideout(e5)


def compute():
    torch.manual_seed(0)
    model = MVANet()
    model.train()
    img = torch.randn(1, 3, 16, 16)
    target = (torch.rand(5, 1, 8, 8) > 0.5).float()
    loss = ((model(img) - target) ** 2).mean()
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters() if p.grad is not None}


if __name__ == "__main__":
    compute()
