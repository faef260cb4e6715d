# reference fix for 618: out-of-place hx[idx].squeeze(0) on the unbind() views
from typing import Optional

import torch
import torch.nn as nn
from torch import Tensor


class _GRULayer(nn.Module):
    def __init__(self, input_dim, hidden_dim):
        super().__init__()
        self.cell = nn.GRUCell(input_dim, hidden_dim)

    def forward(self, x, hx):
        outs = []
        for t in range(x.size(0)):
            hx = self.cell(x[t], hx)
            outs.append(hx)
        return torch.stack(outs), hx


class GRU(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers=1, batch_first=False, bidirectional=False):
        super().__init__()
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.batch_first, self.bidirectional = batch_first, bidirectional
        self.layers = nn.ModuleList([_GRULayer(input_size if i == 0 else hidden_size, hidden_size)
                                     for i in range(num_layers)])

    def forward(self, x: Tensor, hidden: Optional[Tensor] = None):
        if self.batch_first:
            x = x.transpose(0, 1)

        max_batch_size = x.size(1)
        num_directions = 2 if self.bidirectional else 1
        if hidden is None:
            zeros = torch.zeros(num_directions, max_batch_size, self.hidden_size, dtype=torch.float, device=x.device)
            zeros.squeeze_(0)
            hx = [zeros for _ in range(self.num_layers)]
        else:
            hidden_non_opt = torch.jit._unwrap_optional(hidden)
            if isinstance(hidden_non_opt, Tensor):
                hx = hidden_non_opt.reshape(
                    self.num_layers, num_directions, max_batch_size, self.hidden_size
                ).unbind(0)
                hx = [(hx[idx].squeeze(0)) for idx in range(self.num_layers)]
            else:
                hx = hidden_non_opt

        hx_list = []
        for idx, layer in enumerate(self.layers):
            x, h = layer(x, hx[idx])
            hx_list.append(torch.jit._unwrap_optional(h))
        hx_tensor = torch.stack(hx_list)
        hx_tensor = hx_tensor.reshape(-1, hx_tensor.shape[-2], hx_tensor.shape[-1])

        if self.batch_first:
            x = x.transpose(0, 1)

        return x, hx_tensor


class KWSPredictor(nn.Module):
    def __init__(self):
        super().__init__()
        self.h0_proj = nn.Linear(4, 2 * 6)  # produces the (fake-quantised) initial state
        self.kws_predictor_rnn = GRU(5, 6, num_layers=2, batch_first=True)
        self.out = nn.Linear(6, 3)

    def forward(self, feats, ctx):
        h0 = self.h0_proj(ctx).view(ctx.size(0), 2, 6).transpose(0, 1)
        y, h = self.kws_predictor_rnn(feats, h0)
        return self.out(y[:, -1])


def compute():
    torch.manual_seed(0)
    model = KWSPredictor()
    feats, ctx = torch.randn(2, 4, 5), torch.randn(2, 4)
    loss = nn.functional.cross_entropy(model(feats, ctx), torch.tensor([0, 2]))
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
