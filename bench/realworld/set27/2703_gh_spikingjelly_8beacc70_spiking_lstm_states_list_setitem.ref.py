# reference fix for 2703: SpikingRNNBase.forward as of commit 18a1257d (2703helpers_spikingjelly_rnn_fixed.py): each step
# writes into `new_states_list = torch.zeros_like(states_list.data)` and rebinds `states_list = new_states_list.clone()`.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
rnn = importlib.import_module("2703helpers_spikingjelly_rnn_fixed")


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
