# reference fix for 2905: commit a204457 in the library module (2905helpers_snntorch_synaptic_fixed.py):
# `mem = mem - do_reset * mem` (and `mem = mem - do_reset * self.threshold`) in Synaptic.forward.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
snn = importlib.import_module("2905helpers_snntorch_synaptic_fixed")


def compute():
    torch.manual_seed(0)
    fc1 = nn.Linear(4, 5)
    lif1 = snn.Synaptic(alpha=0.9, beta=0.8, reset_mechanism="zero", reset_delay=False)
    fc2 = nn.Linear(5, 3)
    lif2 = snn.Synaptic(alpha=0.9, beta=0.8, reset_mechanism="zero", reset_delay=False)
    x = 2.0 * torch.rand(6, 2, 4)
    target = torch.rand(6, 2, 3)

    syn1 = mem1 = torch.zeros(2, 5)
    syn2 = mem2 = torch.zeros(2, 3)
    mems, spikes = [], []
    for step in range(x.shape[0]):
        spk1, syn1, mem1 = lif1(fc1(x[step]), syn1, mem1)
        spk2, syn2, mem2 = lif2(fc2(spk1), syn2, mem2)
        mems.append(mem2)
        spikes.append(spk1)
    loss = ((torch.stack(mems) - target) ** 2).mean()
    loss.backward()
    return {
        "fc1.weight.grad": fc1.weight.grad,
        "fc1.bias.grad": fc1.bias.grad,
        "fc2.weight.grad": fc2.weight.grad,
        "spikes1": torch.stack(spikes).detach(),
        "loss": loss.detach(),
    }


if __name__ == "__main__":
    compute()
