# source: https://github.com/vllm-project/vllm/pull/24500
# error: A
# A conformer block's forward adds a conv module's output to hidden_states with +=,
# while the conv saved hidden_states for its backward.
import torch
import torch.nn as nn


class ConformerConvModule(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.pointwise = nn.Linear(dim, dim)
        self.act = nn.SiLU()

    def forward(self, hidden_states):
        return self.act(self.pointwise(hidden_states))


class ConformerEncoderLayer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.self_attn = nn.Linear(dim, dim)
        self.conv = ConformerConvModule(dim)
        self.feed_forward_out = nn.Linear(dim, dim)

    def forward(self, hidden_states, attention_mask=None):
        residual = hidden_states
        hidden_states = residual + self.self_attn(hidden_states)
        hidden_states += self.conv(hidden_states)
        hidden_states += 0.5 * self.feed_forward_out(hidden_states)
        return hidden_states


def compute():
    torch.manual_seed(0)
    layer = ConformerEncoderLayer(8)
    x = torch.randn(2, 5, 8)
    out = layer(x)
    out.sum().backward()
    return {n: p.grad for n, p in layer.named_parameters()}


if __name__ == "__main__":
    compute()
