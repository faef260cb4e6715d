# Library module for case 2703 (original).
# fangwei123456/spikingjelly, spikingjelly/clock_driven/rnn.py, read at the parent of commit 8beacc70 (2020-09-17, the
# first of four commits titled "in place操作改成out", "change the in-place operations to out-of-place ones"; the last,
# 18a1257d, gives the reference's loop). Written anew at small size (not copied): the class names (SpikingRNNCellBase,
# SpikingRNNBase, SpikingLSTMCell, SpikingLSTM), the states buffer `states_list` built from the (h, c) tuple, and the
# unidirectional time loop with its buffer writes follow the source; the bidirectional branch, the dropout options and
# the other cell types are left out (the case uses one unidirectional layer without dropout).
# Stand-ins for the sibling modules it imports, with the behaviour of the same commit: surrogate.Erf (spiking: a
# Heaviside forward with the erf surrogate gradient alpha / sqrt(pi) * exp(-(alpha * x)^2), alpha 2), and
# accelerating.mul (autograd Functions multiplying a tensor by a spike tensor, or two spike tensors, that save the
# operands their backward needs).
import math

import torch
import torch.nn as nn


class _erf_surrogate(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.save_for_backward(x)
        ctx.alpha = alpha
        return (x >= 0).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * ctx.alpha / math.sqrt(math.pi) * torch.exp(-(ctx.alpha * x) ** 2), None


class Erf(nn.Module):
    def __init__(self, alpha=2.0):
        super().__init__()
        self.alpha = alpha
        self.spiking = True

    def forward(self, x):
        return _erf_surrogate.apply(x, self.alpha)


class _mul_spike(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, spike):
        mask = spike.bool()
        ctx.save_for_backward(mask, x)
        return x * mask

    @staticmethod
    def backward(ctx, grad_output):
        mask, x = ctx.saved_tensors
        return grad_output * mask, grad_output * x


class _mul_spike_spike(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        a_bool, b_bool = a.bool(), b.bool()
        ctx.save_for_backward(a_bool, b_bool)
        return (a_bool & b_bool).float()

    @staticmethod
    def backward(ctx, grad_output):
        a_bool, b_bool = ctx.saved_tensors
        return grad_output * b_bool, grad_output * a_bool


def spike_mul(x, spike, spike_mul_spike=False):
    return (_mul_spike_spike if spike_mul_spike else _mul_spike).apply(x, spike)


class SpikingRNNCellBase(nn.Module):
    def __init__(self, input_size, hidden_size, bias=True):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias

    def reset_parameters(self):
        bound = math.sqrt(1 / self.hidden_size)
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)


class SpikingLSTMCell(SpikingRNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, surrogate_function1=None):
        super().__init__(input_size, hidden_size, bias)
        self.linear_ih = nn.Linear(input_size, 4 * hidden_size, bias=bias)
        self.linear_hh = nn.Linear(hidden_size, 4 * hidden_size, bias=bias)
        self.surrogate_function1 = surrogate_function1 if surrogate_function1 is not None else Erf()
        self.reset_parameters()

    def forward(self, x, hc):
        h, c = hc[0], hc[1]
        gates = self.surrogate_function1(self.linear_ih(x) + self.linear_hh(h))
        i, f, g, o = torch.split(gates, self.hidden_size, dim=1)
        c = spike_mul(c, f) + spike_mul(i, g, True)
        h = spike_mul(c, o)
        return h, c


class SpikingRNNBase(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers, bias=True):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.cells = nn.Sequential(*[
            self.base_cell()(input_size if i == 0 else hidden_size, hidden_size, bias) for i in range(num_layers)
        ])

    def forward(self, x, states):
        # x: [T, batch, input_size]; states: tuple (h0, c0), each [num_layers, batch, hidden_size]
        T = x.shape[0]
        states_list = torch.stack(states)
        output = []
        for t in range(T):
            states_list[:, 0] = torch.stack(self.cells[0](x[t], states_list[:, 0]))
            for i in range(1, self.num_layers):
                y = states_list[0, i - 1]
                states_list[:, i] = torch.stack(self.cells[i](y, states_list[:, i]))
            output.append(states_list[0, -1].clone().unsqueeze(0))

        return torch.cat(output, dim=0), torch.split(states_list, 1, dim=0)


class SpikingLSTM(SpikingRNNBase):
    @staticmethod
    def base_cell():
        return SpikingLSTMCell

    @staticmethod
    def states_num():
        return 2
