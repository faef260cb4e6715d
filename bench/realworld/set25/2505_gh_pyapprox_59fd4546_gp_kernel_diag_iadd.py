# source: https://github.com/sandialabs/pyapprox/blob/59fd45462b557ef188c7399cbce00e89893d7a01/pyapprox/surrogates/autogp/exactgp.py (maintainer's comment in ExactGaussianProcess._training_kernel_matrix, commit 59fd4546)
# pattern: subscript_augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# PyApprox (Sandia's uncertainty-quantification library), surrogates/autogp ExactGaussianProcess: the negative
# log-likelihood of the GP hyper-parameters is differentiated with torch. Regularising the training kernel matrix
# in place, `kmat[np.diag_indices_from(kmat)] += self.kernel_reg`, writes into the output of the squared-exponential
# kernel `exp(-(distances**2)/2.0)`, which ExpBackward0 saved, so `nll.backward()` fails with "modified by an
# inplace operation ... output 0 of Exp". The maintainer's code keeps both failing forms as comments
# ("Below is an inplace operation that will not work with autograd", "This also does not work": `kmat += diag(...)`)
# and uses `kmat = kmat + diag(full((n, 1), float(self.kernel_reg)))`. (torch.diag of an (n, 1) matrix is its
# single diagonal entry, so that sum adds kernel_reg to every entry; with the default kernel_reg 0, used here as
# in the maintainers' test, it equals the diagonal update.)
# The library module is 2505helpers_pyapprox_autogp.py (ref: ..._fixed.py).
# Stand-ins: the maintainers' test_exact_gp_training setting (1 variable, Matern nu=inf, length scale bounds
# [0.1, 1] in log space, 10 training points on [-1, 1], values x**2) evaluated once at a fixed length scale 0.15
# instead of a random start, without numpy / scipy (see the helper's header).
import importlib
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
ag = importlib.import_module("2505helpers_pyapprox_autogp")


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
