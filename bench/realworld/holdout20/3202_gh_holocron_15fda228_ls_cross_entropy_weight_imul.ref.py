# reference fix for 3202: holocron commit 15fda228 in the library module (3202helpers_holocron_functional_fixed.py,
# imported through 3202helpers_holocron_loss_fixed.py): `logpt = logpt * weight.view(...)` in ls_cross_entropy.
import importlib
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
losses = importlib.import_module("3202helpers_holocron_loss_fixed")


def compute():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    num_samples = torch.tensor([50., 20., 10., 5.])
    criterion = losses.ClassBalancedWrapper(losses.LabelSmoothingCrossEntropy(eps=0.1), num_samples, beta=0.99)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    x = torch.randn(6, 8)
    target = torch.tensor([0, 1, 2, 3, 0, 2])
    optimizer.zero_grad()
    logits = model(x)
    logits.retain_grad()
    loss = criterion(logits, target)
    loss.backward()
    grads = {
        "0.weight.grad": model[0].weight.grad.clone(),
        "2.weight.grad": model[2].weight.grad.clone(),
        "2.bias.grad": model[2].bias.grad.clone(),
        "logits.grad": logits.grad.clone(),
    }
    optimizer.step()
    out = {"loss": loss.detach()}
    out.update(grads)
    out["2.weight.after_step"] = model[2].weight.detach().clone()
    return out


if __name__ == "__main__":
    compute()
