# source: https://github.com/huggingface/transformers/pull/41535
# pattern: custom_function_view_setitem
# codemod_fixable: yes
# error: C
# ref_semantics: same
# transformers, Qwen3-VL(-MoE) text model, `_deepstack_process`: `local_this = hidden_states[visual_pos_masks, :].clone()
# + visual_embeds; hidden_states[visual_pos_masks, :] = local_this`. When the decoder layer's output comes out of a
# custom autograd Function that returns a view of its input (gradient checkpointing / tensor-parallel wrappers), the
# write fails: "Output 0 of ... is a view and is being modified inplace. This view was created inside a custom
# Function ...". PR #41535 (merged): `hidden_states = hidden_states.clone()` before the write.
# Stand-ins: a pass-through custom Function for the wrapper, a linear "decoder layer", width 4, 2 x 5 tokens.
import torch
import torch.nn as nn


class PassThrough(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return grad


def _deepstack_process(hidden_states, visual_pos_masks, visual_embeds):
    local_this = hidden_states[visual_pos_masks, :].clone() + visual_embeds
    hidden_states[visual_pos_masks, :] = local_this
    return hidden_states


def compute():
    torch.manual_seed(0)
    layers = nn.ModuleList(nn.Linear(4, 4) for _ in range(2))
    deepstack_proj = nn.Linear(3, 4)
    hidden_states = torch.randn(2, 5, 4)
    visual_pos_masks = torch.tensor([[0, 1, 1, 0, 0], [0, 0, 1, 1, 0]], dtype=torch.bool)
    visual_feats = torch.randn(2, 4, 3)
    for i, layer in enumerate(layers):
        hidden_states = PassThrough.apply(torch.tanh(layer(hidden_states)))
        hidden_states = _deepstack_process(hidden_states, visual_pos_masks, deepstack_proj(visual_feats[i]))
    hidden_states.pow(2).mean().backward()
    out = {f"layer{i}.weight": l.weight.grad for i, l in enumerate(layers)}
    out["deepstack_proj.weight"] = deepstack_proj.weight.grad
    return out


if __name__ == "__main__":
    compute()
