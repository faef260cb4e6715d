# source: https://github.com/jeshraghian/snntorch/commit/a20445727de7ab91e040cd84d9266a620ce71f3a
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# snntorch (spiking neural networks), the Synaptic neuron (snntorch/_neurons/synaptic.py) with `reset_delay=False`,
# added in October 2023: right after a spike the membrane is reset in the same step with `mem -= do_reset * mem` for
# the reset-to-zero mechanism (`mem -= do_reset * self.threshold` for reset-by-subtraction), where
# `do_reset = spk / self.graded_spikes_factor - self.reset` carries the surrogate gradient of the spike. The product
# `do_reset * mem` saves `mem`, and the in-place subtraction then overwrites it, so training through time fails at
# backward with "one of the variables needed for gradient computation has been modified by an inplace operation"
# (MulBackward0's saved `mem`). Commit a204457 ("fix reset_delay (+ add for (r)leaky)") writes both resets out of place
# (`mem = mem - do_reset * mem`), in Synaptic and RSynaptic (where it leaves the old line as a comment), and adds the
# option to Leaky and RLeaky written that way.
# The library module is 2905helpers_snntorch_synaptic.py (ref: ..._fixed.py); its header names its stand-ins.
# Stand-ins here: the docstring's two-layer network (Linear -> Synaptic -> Linear -> Synaptic) at small size, with
# `reset_mechanism="zero", reset_delay=False`, zero initial states, a random input current over 6 time steps (scaled so
# that the first layer spikes), and a mean-squared loss of the output membrane to a fixed target.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
snn = importlib.import_module("2905helpers_snntorch_synaptic")


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
