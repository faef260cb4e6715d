# source: https://github.com/synsense/sinabs/commit/c52b56dd5e0b746a3fb4b4a8a1f3eace85a444c2
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# sinabs (synsense/sinabs, spiking neural networks), commit c52b56dd "zero grad tests for ALIF/LIF and replace
# in-place operation". The adaptive LIF layer (ALIF) updates its threshold state in place at every time step,
# `self.threshold -= self.resting_threshold; self.threshold *= beta; self.threshold += output_spikes * ... +
# self.resting_threshold`, while LIF.update_state_after_spike has just used it as `membrane_subtract` in
# `self.state - self.activations * self.membrane_subtract` (the product saves the threshold tensor, and the threshold
# carries a graph from the spikes it adapted to), so training through the layer fails at backward ("... output 0 of
# Add, is at version 18; expected version 12"). Fix: rebind out of place (`self.threshold = self.threshold -
# ...`, `= self.threshold * beta`, `= self.threshold + ...`), and the same for LIF's `self.state *= alpha` /
# `self.state += input_current[:, step]`, which the same commit rewrote.
# ThresholdSubtract keeps the threshold tensor as `ctx.threshold` (an attribute, not a saved tensor), so in the
# original its backward would read the threshold as last mutated; a replay with saved tensors cloned keeps that
# aliasing and differs from the reference, whose per-step thresholds are distinct tensors (the fix's meaning).
# Library module: 3506helpers_sinabs_layers.py (ref: ..._fixed.py). The program is the commit's own regression test
# (tests/test_alif.py, test_alif_zero_grad: a depthwise Conv1d over the time axis in front of ALIF, an MSE to ones,
# backward, an SGD step) at a small size (batch 3, 6 time steps, 4 neurons, threshold 1 and inputs up to 8 so that neurons spike).
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
layers = importlib.import_module("3506helpers_sinabs_layers")


def compute():
    torch.manual_seed(0)
    batch_size, time_steps, n_neurons = 3, 6, 4
    sl = layers.ALIF(tau_mem=time_steps, threshold=1.0, tau_threshold=time_steps)
    conv = torch.nn.Conv1d(in_channels=time_steps, out_channels=time_steps, kernel_size=3, padding=1,
                           groups=time_steps)
    model = torch.nn.Sequential(conv, sl)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data0 = torch.rand((batch_size, time_steps, n_neurons)) * 8.0
    out0 = model(data0)
    loss = torch.nn.functional.mse_loss(out0, torch.ones_like(out0))
    loss.backward()
    out = {"loss": loss.detach(), "spikes": out0.detach(), "conv.weight.grad": conv.weight.grad.clone(),
           "conv.bias.grad": conv.bias.grad.clone(), "threshold": sl.threshold.detach().clone(),
           "state": sl.state.detach().clone()}
    optimizer.step()
    out["conv.weight.after"] = conv.weight.detach().clone()
    return out


if __name__ == "__main__":
    compute()
