# source: https://github.com/unit8co/darts/commit/6604c3cd1c5830541b59cfc7e9ba4612ef2275c3
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# darts (time-series forecasting), TCNModel's torch module: every _ResidualBlock but the last ends with
# `x = self.dropout_fn(F.relu(self.conv2(x)))` and then adds the residual with `x += residual`. With `dropout=0`
# nn.Dropout returns its input unchanged (on CPU, and in eval mode), so `x` is ReLU's output, which ReluBackward saved:
# training fails at backward with "one of the variables needed for gradient computation has been modified by an
# inplace operation" (output 0 of ReluBackward0). The DeepTCN example notebook (examples/10-DeepTCN-examples.ipynb)
# builds exactly that model (`TCNModel(input_chunk_length=30, output_chunk_length=20, kernel_size=2, num_filters=4,
# dilation_base=2, dropout=0, likelihood=GaussianLikelihood())`), and commit 6604c3c / PR #698 ("Fix/failing notebooks")
# writes `x = x + residual`.
# The library module is 2903helpers_darts_tcn_model.py (ref: ..._fixed.py); its header names its stand-ins.
# Stand-ins here: the notebook's configuration at small size (input chunk 12, so three residual blocks; a target and a
# covariate as inputs; two likelihood parameters), a random batch of 4 windows, and a Gaussian negative log-likelihood
# on the last 4 time steps written with F.gaussian_nll_loss in place of darts' GaussianLikelihood.
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
tcn = importlib.import_module("2903helpers_darts_tcn_model")


def compute():
    torch.manual_seed(0)
    model = tcn._TCNModule(input_size=2, input_chunk_length=12, kernel_size=2, num_filters=4, num_layers=None,
                           dilation_base=2, target_size=1, nr_params=2, target_length=4, dropout=0)
    x = torch.randn(4, 12, 2)
    y = torch.randn(4, 4, 1)

    out = model(x)
    mu = out[:, -4:, :, 0]
    sigma = F.softplus(out[:, -4:, :, 1])
    loss = F.gaussian_nll_loss(mu, y, sigma ** 2)
    loss.backward()
    return {
        "block0.conv1.weight.grad": model.res_blocks[0].conv1.weight.grad,
        "block0.conv3.weight.grad": model.res_blocks[0].conv3.weight.grad,
        "block1.conv2.weight.grad": model.res_blocks[1].conv2.weight.grad,
        "block2.conv2.bias.grad": model.res_blocks[2].conv2.bias.grad,
        "loss": loss.detach(),
    }


if __name__ == "__main__":
    compute()
