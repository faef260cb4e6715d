# reference fix for 2505: the maintainer's line in the library module (2505helpers_pyapprox_autogp_fixed.py):
# `kmat = kmat + diag(full((n, 1), float(self.kernel_reg)))`, out of place.
import importlib
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
ag = importlib.import_module("2505helpers_pyapprox_autogp_fixed")


def compute():
    torch.manual_seed(0)
    nvars = 1
    kernel = ag.MaternKernel(math.inf, 1.0, [1e-1, 1.0], nvars)
    gp = ag.ExactGaussianProcess(nvars, kernel)
    train_samples = torch.linspace(-1, 1, 10, dtype=torch.double)[None, :]
    train_values = (train_samples ** 2).sum(dim=0)[:, None]
    gp.set_training_data(train_samples, train_values)
    x0 = torch.log(torch.tensor([0.15], dtype=torch.double))
    nll, nll_grad = gp._fit_objective(x0)
    return {"nll": nll, "nll_grad": nll_grad}


if __name__ == "__main__":
    compute()
