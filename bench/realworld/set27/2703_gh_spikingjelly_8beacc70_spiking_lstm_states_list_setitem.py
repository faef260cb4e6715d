# source: https://github.com/fangwei123456/spikingjelly/commit/8beacc70a60753b017e292837e8d17cdd3a94ff4
# pattern: subscript_assign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# SpikingJelly (spiking neural networks), clock_driven/rnn.py, SpikingRNNBase.forward (here through SpikingLSTM,
# unidirectional): every time step reads the layer's (h, c) from the state buffer and writes the new state back
# into the same buffer, `states_list[:, 0] = torch.stack(self.cells[0](x[t], states_list[:, 0]))`. The cell saved
# views of the buffer for backward (linear_hh saved h for its weight gradient, `accelerating.mul(c, f)` saved c), so
# the next write makes the network's backward fail with "modified by an inplace operation". The four commits
# titled "in place操作改成out" (8beacc70 .. 18a1257d, 2020-09-17: "change the in-place operations to out-of-place")
# write each step's states into a fresh `new_states_list = torch.zeros_like(states_list.data)` and rebind
# `states_list = new_states_list.clone()` after the step (the reference uses 18a1257d's forward).
# The library module is 2703helpers_spikingjelly_rnn.py (ref: ..._fixed.py); its header names its stand-ins
# (surrogate Erf and the accelerating spike multiplications, with the behaviour of the same commit).
# Stand-ins here: one layer (4 inputs, 6 hidden), initial states passed as a tuple of zeros (h0, c0) of shape
# [num_layers, batch, hidden] (with states=None the source squeezes the buffer and a one-layer network cannot
# run), 5 time steps of 3 random input currents, training mode (the spiking Erf surrogate), and a linear
# read-out of the mean output spikes with a squared-error loss against random targets.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
rnn = importlib.import_module("2703helpers_spikingjelly_rnn")


def compute():
    torch.manual_seed(0)
    net = rnn.SpikingLSTM(input_size=4, hidden_size=6, num_layers=1)
    readout = torch.nn.Linear(6, 2)
    net.train()
    x = torch.randn(5, 3, 4)
    h0 = torch.zeros(1, 3, 6)
    c0 = torch.zeros(1, 3, 6)
    out, (h_n, c_n) = net(x, (h0, c0))
    target = torch.randn(3, 2)
    loss = ((readout(out.mean(0)) - target) ** 2).mean()
    loss.backward()
    cell = net.cells[0]
    return {
        "cell.linear_ih.weight.grad": cell.linear_ih.weight.grad,
        "cell.linear_hh.weight.grad": cell.linear_hh.weight.grad,
        "cell.linear_hh.bias.grad": cell.linear_hh.bias.grad,
        "readout.weight.grad": readout.weight.grad,
        "loss": loss.detach(),
    }


if __name__ == "__main__":
    compute()
