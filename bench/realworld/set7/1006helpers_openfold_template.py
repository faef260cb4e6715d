# Reduced copy of openfold/model/template.py (OpenFold, October 2021, before commit d5480cb) for case 1006:
# TemplatePairStackBlock verbatim. Stand-ins for the modules it calls (openfold/model/triangular_attention.py,
# triangular_multiplicative_update.py, pair_transition.py, dropout.py): small single-head versions that keep what
# matters here, a LayerNorm on their input (which saves that input for backward), gating and the pair mask; no
# chunking.
import torch
import torch.nn as nn


class DropoutRowwise(nn.Module):
    """Dropout with the mask shared along the row dimension (-3)."""

    def __init__(self, r):
        super().__init__()
        self.r = r

    def forward(self, x):
        if not self.training or self.r == 0:
            return x
        shape = list(x.shape)
        shape[-3] = 1
        mask = x.new_ones(shape)
        mask = nn.functional.dropout(mask, self.r, True)
        return x * mask


class DropoutColumnwise(DropoutRowwise):
    def forward(self, x):
        return super().forward(x.transpose(-2, -3)).transpose(-2, -3)


class TriangleAttentionStartingNode(nn.Module):
    def __init__(self, c_in, c_hidden, no_heads, inf=1e9, starting=True):
        super().__init__()
        self.starting = starting
        self.inf = inf
        self.layer_norm = nn.LayerNorm(c_in)
        self.linear = nn.Linear(c_in, 1, bias=False)
        self.q = nn.Linear(c_in, c_hidden, bias=False)
        self.k = nn.Linear(c_in, c_hidden, bias=False)
        self.v = nn.Linear(c_in, c_hidden, bias=False)
        self.g = nn.Linear(c_in, c_hidden)
        self.o = nn.Linear(c_hidden, c_in)

    def forward(self, x, chunk_size=None, mask=None):
        if not self.starting:
            x = x.transpose(-2, -3)
            mask = mask.transpose(-1, -2)
        x = self.layer_norm(x)
        mask_bias = (self.inf * (mask - 1))[..., :, None, None, :]
        triangle_bias = self.linear(x).squeeze(-1)[..., None, :, :].unsqueeze(-4)
        q, k, v = self.q(x), self.k(x), self.v(x)
        a = torch.einsum('...ijc,...ikc->...ijk', q, k) / q.shape[-1] ** 0.5
        a = a + mask_bias.squeeze(-2) + triangle_bias.squeeze(-4)
        a = torch.softmax(a, -1)
        o = torch.einsum('...ijk,...ikc->...ijc', a, v) * torch.sigmoid(self.g(x))
        o = self.o(o)
        if not self.starting:
            o = o.transpose(-2, -3)
        return o


class TriangleAttentionEndingNode(TriangleAttentionStartingNode):
    def __init__(self, c_in, c_hidden, no_heads, inf=1e9):
        super().__init__(c_in, c_hidden, no_heads, inf=inf, starting=False)


class TriangleMultiplicationOutgoing(nn.Module):
    def __init__(self, c_z, c_hidden, outgoing=True):
        super().__init__()
        self.outgoing = outgoing
        self.layer_norm_in = nn.LayerNorm(c_z)
        self.layer_norm_out = nn.LayerNorm(c_hidden)
        self.linear_a_p = nn.Linear(c_z, c_hidden)
        self.linear_a_g = nn.Linear(c_z, c_hidden)
        self.linear_b_p = nn.Linear(c_z, c_hidden)
        self.linear_b_g = nn.Linear(c_z, c_hidden)
        self.linear_g = nn.Linear(c_z, c_z)
        self.linear_z = nn.Linear(c_hidden, c_z)

    def forward(self, z, mask=None):
        mask = mask.unsqueeze(-1)
        z = self.layer_norm_in(z)
        a = mask * torch.sigmoid(self.linear_a_g(z)) * self.linear_a_p(z)
        b = mask * torch.sigmoid(self.linear_b_g(z)) * self.linear_b_p(z)
        if self.outgoing:
            x = torch.einsum('...ikc,...jkc->...ijc', a, b)
        else:
            x = torch.einsum('...kic,...kjc->...ijc', a, b)
        x = self.linear_z(self.layer_norm_out(x))
        return x * torch.sigmoid(self.linear_g(z))


class TriangleMultiplicationIncoming(TriangleMultiplicationOutgoing):
    def __init__(self, c_z, c_hidden):
        super().__init__(c_z, c_hidden, outgoing=False)


class PairTransition(nn.Module):
    def __init__(self, c_z, n):
        super().__init__()
        self.layer_norm = nn.LayerNorm(c_z)
        self.linear_1 = nn.Linear(c_z, n * c_z)
        self.relu = nn.ReLU()
        self.linear_2 = nn.Linear(n * c_z, c_z)

    def forward(self, z, chunk_size=None, mask=None):
        if mask is None:
            mask = z.new_ones(z.shape[:-1])
        z = self.layer_norm(z)
        return self.linear_2(self.relu(self.linear_1(z))) * mask.unsqueeze(-1)


class TemplatePairStackBlock(nn.Module):
    def __init__(
        self,
        c_t,
        c_hidden_tri_att,
        c_hidden_tri_mul,
        no_heads,
        pair_transition_n,
        dropout_rate,
        inf,
        **kwargs,
    ):
        super(TemplatePairStackBlock, self).__init__()

        self.c_t = c_t
        self.c_hidden_tri_att = c_hidden_tri_att
        self.c_hidden_tri_mul = c_hidden_tri_mul
        self.no_heads = no_heads
        self.pair_transition_n = pair_transition_n
        self.dropout_rate = dropout_rate
        self.inf = inf

        self.dropout_row = DropoutRowwise(self.dropout_rate)
        self.dropout_col = DropoutColumnwise(self.dropout_rate)

        self.tri_att_start = TriangleAttentionStartingNode(
            self.c_t,
            self.c_hidden_tri_att,
            self.no_heads,
            inf=inf,
        )
        self.tri_att_end = TriangleAttentionEndingNode(
            self.c_t,
            self.c_hidden_tri_att,
            self.no_heads,
            inf=inf,
        )

        self.tri_mul_out = TriangleMultiplicationOutgoing(
            self.c_t,
            self.c_hidden_tri_mul,
        )
        self.tri_mul_in = TriangleMultiplicationIncoming(
            self.c_t,
            self.c_hidden_tri_mul,
        )

        self.pair_transition = PairTransition(
            self.c_t,
            self.pair_transition_n,
        )

    def forward(self, z, mask, chunk_size, _mask_trans=True):
        for templ_idx in range(z.shape[-4]):
            # Select a single template at a time
            single = z[..., templ_idx:templ_idx+1, :, :, :]
            single_mask = mask[..., templ_idx:templ_idx+1, :, :]

            single = single + self.dropout_row(
                self.tri_att_start(
                    single,
                    chunk_size=chunk_size,
                    mask=single_mask
                )
            )
            single = single + self.dropout_col(
                self.tri_att_end(
                    single,
                    chunk_size=chunk_size,
                    mask=single_mask
                )
            )
            single = single + self.dropout_row(
                self.tri_mul_out(
                    single,
                    mask=single_mask
                )
            )
            single = single + self.dropout_row(
                self.tri_mul_in(
                    single,
                    mask=single_mask
                )
            )
            single = single + self.pair_transition(
                single,
                chunk_size=chunk_size,
                mask=single_mask if _mask_trans else None
            )
            z[..., templ_idx:templ_idx+1, :, :, :] = single

        return z
