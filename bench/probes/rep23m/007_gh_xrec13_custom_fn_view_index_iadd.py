# source: https://github.com/HKUDS/XRec/issues/13
# pattern: custom_function_view_index_iadd
# codemod_fixable: yes
# error: C
# ref_semantics: same
# XRec, explainer/models/modeling_explainer.py (a LLaMA attention that splices the user/item embeddings into the
# queries): `query_states[torch.arange(user_embed_pos.shape[0]), user_embed_pos[:, 0], :] += user_embed`, where the
# query projection comes out of a custom autograd Function (a quantised / LoRA linear) as a view: "Output 0 of
# SliceBackward0 is a view and is being modified inplace. This view was created inside a custom Function ...
# You can fix this by cloning the output of the custom Function." The reporter's clone of the indexed piece
# did not help; the error's own advice (clone the Function's output, i.e. query_states) is the reference.
# Stand-ins: a pass-through custom Function around a linear projection, batch 2, 5 positions, width 4.
import torch
import torch.nn as nn


class QuantLinearFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        out = x @ weight.t()
        return out.view(out.shape)

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        return grad @ weight, grad.flatten(0, -2).t() @ x.flatten(0, -2)


class Attention(nn.Module):
    def __init__(self, d=4):
        super().__init__()
        self.q_weight = nn.Parameter(torch.randn(d, d) * 0.3)
        self.user_proj = nn.Linear(3, d)

    def forward(self, hidden_states, user_embed_pos, user_feats):
        query_states = QuantLinearFn.apply(hidden_states, self.q_weight)[:, :, :]
        user_embed = self.user_proj(user_feats)
        query_states[torch.arange(user_embed_pos.shape[0]), user_embed_pos[:, 0], :] += user_embed
        return torch.softmax(query_states @ hidden_states.transpose(1, 2), -1) @ hidden_states


def compute():
    torch.manual_seed(0)
    attn = Attention()
    hidden_states = torch.randn(2, 5, 4)
    out = attn(hidden_states, torch.tensor([[1], [3]]), torch.randn(2, 3))
    out.pow(2).mean().backward()
    return {n: p.grad for n, p in attn.named_parameters()}


if __name__ == "__main__":
    compute()
