# Library module for case 2704 (original).
# fla-org/flash-linear-attention, fla/ops/gdn2/naive.py, read at the parent of commit 52049aea ("Fix inplace mod",
# 2025-07-09): naive_recurrent_gdn2, the plain-PyTorch recurrent reference of the GDN2 kernels (gated delta rule with
# per-key gates) that the tests differentiate. Written anew at small size (not copied): the function name, its
# arguments, the float casts and scaling, and the per-step state update with its two statements on S follow the
# source; naive_chunk_gdn2 of the same file (and its einops import) is left out.
import torch


def naive_recurrent_gdn2(q, k, v, g, beta, scale=None, initial_state=None, output_final_state=False):
    dtype = v.dtype
    B, T, H, K = q.shape
    V = v.shape[-1]
    scale = K ** -0.5 if scale is None else scale
    q, k, v, g, beta = (t.float() for t in (q, k, v, g, beta))
    q = q * scale
    S = k.new_zeros(B, H, K, V).to(q)
    if initial_state is not None:
        S += initial_state
    o = torch.zeros_like(v)
    for i in range(T):
        q_i, k_i, v_i, g_i, b_i = q[:, i], k[:, i], v[:, i], g[:, i], beta[:, i]
        S *= g_i[..., None].exp()
        S += torch.einsum('bhk,bhv->bhkv', b_i[..., None] * k_i, v_i - (k_i[..., None] * S).sum(-2))

        o[:, i] = torch.einsum('bhk,bhkv->bhv', q_i, S)
    return o.to(dtype), (S if output_final_state else None)
