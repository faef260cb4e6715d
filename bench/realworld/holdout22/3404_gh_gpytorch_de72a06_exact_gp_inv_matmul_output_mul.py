# source: https://github.com/cornellius-gp/gpytorch/commit/de72a06a61e8ab005640408c59b10137a097fe81
# pattern: inplace_method
# codemod_fixable: yes
# error: A
# ref_semantics: same
# GPyTorch, issue #67 "Cannot compute gradient of variance" (January 2018; a maintainer's fix the next days, de72a06,
# "Change in-place mul_ to mul (Fixes #67)"). The program: a trained exact GP (the simple regression
# notebook) called in eval mode on `test_x = Variable(torch.rand(10), requires_grad=True)`; the gradient of the
# sum of the predictive means works, the gradient of the sum of the variances fails with "one of the variables
# needed for gradient computation has been modified by an inplace operation". In ExactGP.__call__ the covariance
# correction is `gpytorch.inv_matmul(train_train_covar, train_test_covar).mul_(-1)`: InvMatmul (a custom autograd
# Function) saves its own result for its backward, and `.mul_(-1)` negates that result in place. The fix: `.mul(-1)`.
# Library modules: 3404helpers_gpytorch_exact_gp.py (ref: ..._fixed.py), the posterior path of ExactGP.__call__ with
# stand-ins named there (dense tensors for LazyVariables, a zero-mean RBF GP with fixed hyperparameters);
# 3404helpers_gpytorch_function_factory.py (shared): the source's InvMatmul, ported to the static Function API, with
# an exact solve in place of conjugate gradients. Stand-ins here: the training data (a noisy sine on 12 points, as
# in the notebook's regression example) and the already-trained model (fixed hyperparameters).
import importlib
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
exact_gp = importlib.import_module("3404helpers_gpytorch_exact_gp")


def compute():
    torch.manual_seed(0)
    train_x = torch.linspace(0, 1, 12)
    train_y = torch.sin(train_x * (2 * math.pi)) + 0.2 * torch.randn(12)
    model = exact_gp.ExactGP(train_x, train_y)

    test_x = torch.rand(10, requires_grad=True)
    mean, covar = model(test_x)
    sum_of_means = mean.sum()
    sum_of_means.backward(retain_graph=True)
    mean_grad = test_x.grad.clone()
    test_x.grad = None

    sum_of_vars = covar.diagonal().sum()
    sum_of_vars.backward()
    return {
        "mean": mean.detach(),
        "var": covar.diagonal().detach(),
        "test_x.grad(mean)": mean_grad,
        "test_x.grad(var)": test_x.grad.clone(),
    }


if __name__ == "__main__":
    compute()
