# reference fix for 2607: commit d077128 in the library module (2607helpers_torch_two_sample_fixed.py):
# `d = d - d.max()` and `margs = margs / len(alphas)`.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
tts = importlib.import_module("2607helpers_torch_two_sample_fixed")


def compute():
    torch.manual_seed(0)
    generator = torch.nn.Linear(3, 2)
    noise = torch.randn(5, 3)
    data = torch.randn(5, 2) + torch.tensor([1.0, -0.5])
    fr_test = tts.SmoothFRStatistic(5, 5, compute_t_stat=True)
    statistic = fr_test(generator(noise), data, alphas=[0.5, 1.0])
    statistic.backward()
    return {"generator.weight.grad": generator.weight.grad, "generator.bias.grad": generator.bias.grad,
            "statistic": statistic.detach()}


if __name__ == "__main__":
    compute()
