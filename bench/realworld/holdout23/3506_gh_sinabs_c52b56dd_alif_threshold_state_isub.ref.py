# reference fix for 3506: sinabs commit c52b56dd in the library module (3506helpers_sinabs_layers_fixed.py): the
# threshold and membrane state updates rebound out of place.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
layers = importlib.import_module("3506helpers_sinabs_layers_fixed")


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
