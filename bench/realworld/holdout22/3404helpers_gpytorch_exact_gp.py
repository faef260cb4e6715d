# Library module for case 3404: cornellius-gp/gpytorch gpytorch/models/exact_gp.py at the parent of de72a06,
# reduced to the posterior of ExactGP.__call__ in eval mode on the full-covariance path (not fast_pred_var), with
# `covar_correction_rhs = gpytorch.inv_matmul(train_train_covar, train_test_covar).mul_(-1)`. Stand-ins: the model is
# a zero-mean GP with an RBF kernel and fixed hyperparameters (in place of the notebook's trained ExactGPModel with a
# ConstantMean, RBFKernel and GaussianLikelihood); LazyVariables are dense tensors (NonLazyVariable /
# MatmulLazyVariable evaluated); the predictive variance is the covariance's diagonal.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
ff = importlib.import_module("3404helpers_gpytorch_function_factory")


def rbf(x1, x2, lengthscale, outputscale):
    d = x1.unsqueeze(1) - x2.unsqueeze(0)
    return outputscale * torch.exp(-0.5 * d.pow(2) / lengthscale ** 2)


class ExactGP:
    def __init__(self, train_inputs, train_targets, lengthscale=0.3, outputscale=1.0, noise=0.04):
        self.train_inputs = train_inputs
        self.train_targets = train_targets
        self.lengthscale, self.outputscale, self.noise = lengthscale, outputscale, noise

    def __call__(self, test_x):
        train_x = self.train_inputs
        n_train = train_x.size(0)
        full_x = torch.cat([train_x, test_x])
        full_covar = rbf(full_x, full_x, self.lengthscale, self.outputscale)
        train_train_covar = full_covar[:n_train, :n_train] + self.noise * torch.eye(n_train)
        train_test_covar = full_covar[:n_train, n_train:]
        test_train_covar = full_covar[n_train:, :n_train]
        test_test_covar = full_covar[n_train:, n_train:]

        # Calculate mean
        alpha = ff.inv_matmul(train_train_covar, self.train_targets.unsqueeze(-1)).squeeze(-1)
        predictive_mean = test_train_covar.matmul(alpha)

        # Compute full covariance matrix - much slower
        covar_correction_rhs = ff.inv_matmul(train_train_covar, train_test_covar).mul_(-1)
        predictive_covar = test_test_covar + test_train_covar.matmul(covar_correction_rhs)
        return predictive_mean, predictive_covar
