# reference fix for 2501: commit 8b4305f2 in the library module (2501helpers_spikingjelly_clock_driven_fixed.py):
# `y_seq[t] = y_seq[t].unsqueeze(0)` instead of `y_seq[t].unsqueeze_(0)` in MultiStepContainer.forward.
import importlib
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sj = importlib.import_module("2501helpers_spikingjelly_clock_driven_fixed")


def compute():
    torch.manual_seed(0)
    T, N, D, H, C = 4, 3, 6, 5, 3
    net = sj.MultiStepContainer(
        nn.Linear(D, H), sj.IFNode(v_threshold=0.5),
        nn.Linear(H, C), sj.IFNode(v_threshold=0.5),
        sj.SynapseFilter(tau=2.0),
    )
    with torch.no_grad():
        net[0].weight.mul_(3.0)
        net[2].weight.mul_(3.0)
    x_seq = (torch.rand(T, N, D) > 0.4).float()
    label = torch.tensor([0, 2, 1])
    out_seq = net(x_seq)
    loss = F.mse_loss(out_seq.mean(0), F.one_hot(label, C).float())
    loss.backward()
    sj.reset_net(net)
    return {
        "fc1.weight.grad": net[0].weight.grad, "fc1.bias.grad": net[0].bias.grad,
        "fc2.weight.grad": net[2].weight.grad, "fc2.bias.grad": net[2].bias.grad,
        "loss": loss.detach(),
    }


if __name__ == "__main__":
    compute()
