# source: https://github.com/fangwei123456/spikingjelly/commit/8b4305f26c7b6b259a2262d7c1b4a4b8bf7f6972
# pattern: inplace_method
# codemod_fixable: yes
# error: A
# ref_semantics: same
# SpikingJelly (spiking neural networks), clock_driven.layer.MultiStepContainer: the container runs its single-step
# modules once per time step and then, before `torch.cat`, turns each step's output into a [1, N, ...] slice with
# the in-place shape op `y_seq[t].unsqueeze_(0)`. unsqueeze_ bumps the tensor's version counter. When the wrapped
# stack ends in a stateful layer whose next step multiplies the previous output by a tensor that requires grad
# (here the low-pass SynapseFilter read-out: `out_i - (1 - in_spikes) * out_i / tau + in_spikes`, so MulBackward0
# saves out_i of step t-1), the backward fails with "modified by an inplace operation ... is at version 1".
# Commit 8b4305f2 ("do not use inplace operation, to avoid the gradient problem", the same change in
# functional.multi_step_forward) writes `y_seq[t] = y_seq[t].unsqueeze(0)`.
# The library module is 2501helpers_spikingjelly_clock_driven.py (ref: ..._fixed.py).
# Stand-ins: a 2-layer spiking classifier on random Poisson-like input spikes (T=4 steps, 3 samples, 6 inputs,
# 3 classes): Linear -> IFNode -> Linear -> IFNode -> SynapseFilter(tau=2.0) inside one MultiStepContainer; the loss
# is the MSE between the read-out current averaged over time and one-hot labels; reset_net after the step.
import importlib
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sj = importlib.import_module("2501helpers_spikingjelly_clock_driven")


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
