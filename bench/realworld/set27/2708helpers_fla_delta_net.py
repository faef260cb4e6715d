# Library module for case 2708 (original).
# fla-org/flash-linear-attention, fla/layers/delta_net.py, read at the parent of commit 670f5706 ("Fix inplace mul when
# training with masks", 2024-11-06): the DeltaNet attention layer. Written anew at small size (not copied): the class
# name, its constructor arguments and projections (q_proj, k_proj, v_proj, b_proj, o_norm, o_proj; xavier-uniform init
# with gain 2 ** -2.5), and forward's order (projections, SiLU on v without short convolution, head split, l2 norm of
# q and k, beta = sigmoid of b_proj, the masking of beta, the delta-rule recurrence, output norm per head, output
# projection) follow the source; only the options the case uses are kept (use_short_conv=False, use_gate=False,
# qk_activation 'silu', qk_norm 'l2', no cache).
# Stand-ins (the Triton / CUDA kernels are not available on CPU): the delta-rule kernels -> the plain recurrence of
# fla/ops/delta_rule/naive.py (S <- S + k (beta (v - S^T k))^T, o = q^T S with q scaled by d_k ** -0.5); l2_norm ->
# x * rsqrt(sum(x^2) + 1e-6); RMSNorm -> x * rsqrt(mean(x^2) + eps) * weight; einops.rearrange -> reshape / permute.
import torch
import torch.nn as nn
import torch.nn.functional as F


def l2_norm(x, eps=1e-6):
    return x * torch.rsqrt((x * x).sum(-1, keepdim=True) + eps)


class RMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden_size))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def delta_rule_recurrence(q, k, v, beta):
    b, h, l, d_k = q.shape
    q = q * d_k ** -0.5
    beta = beta[..., None]
    S = q.new_zeros(b, h, d_k, v.shape[-1])
    o = torch.zeros_like(v)
    for i in range(l):
        k_i = k[:, :, i]
        u = (v[:, :, i] - (S * k_i[..., None]).sum(-2)) * beta[:, :, i]
        S = S + k_i.unsqueeze(-1) * u.unsqueeze(-2)
        o[:, :, i] = torch.einsum('bhd,bhdm->bhm', q[:, :, i], S)
    return o, None


class DeltaNet(nn.Module):
    def __init__(self, hidden_size=1024, expand_k=1.0, expand_v=1.0, num_heads=4, use_beta=True, use_gate=False,
                 use_short_conv=False, norm_eps=1e-5):
        super().__init__()
        if use_short_conv or use_gate:
            raise NotImplementedError("stand-in: only use_short_conv=False, use_gate=False are kept")
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.key_dim = int(hidden_size * expand_k)
        self.value_dim = int(hidden_size * expand_v)
        self.head_v_dim = self.value_dim // num_heads
        self.use_beta = use_beta
        self.silu = nn.SiLU()
        self.q_proj = nn.Linear(hidden_size, self.key_dim, bias=False)
        self.k_proj = nn.Linear(hidden_size, self.key_dim, bias=False)
        self.v_proj = nn.Linear(hidden_size, self.value_dim, bias=False)
        if use_beta:
            self.b_proj = nn.Linear(hidden_size, num_heads, bias=False)
        self.o_norm = RMSNorm(self.head_v_dim, eps=norm_eps)
        self.o_proj = nn.Linear(self.value_dim, hidden_size, bias=False)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight, gain=2 ** -2.5)

    def _heads(self, x):
        b, t, _ = x.shape
        return x.reshape(b, t, self.num_heads, -1).permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask=None):
        q = self._heads(self.q_proj(hidden_states))
        k = self._heads(self.k_proj(hidden_states))
        v = self._heads(self.silu(self.v_proj(hidden_states)))
        q, k = l2_norm(q), l2_norm(k)
        if self.use_beta:
            beta = self.b_proj(hidden_states).permute(0, 2, 1).sigmoid()
        else:
            beta = q.new_ones(q.shape[0], q.shape[1], q.shape[2])
        if attention_mask is not None:
            beta = beta.mul_(attention_mask[:, None, -beta.shape[-1]:])

        o, _ = delta_rule_recurrence(q, k, v, beta)
        o = self.o_norm(o.permute(0, 2, 1, 3))
        o = self.o_proj(o.reshape(o.shape[0], o.shape[1], -1))
        return o, None, None
