# reference: PR #41535, clone hidden_states before the masked write
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
    hidden_states = hidden_states.clone()
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
