# reference fix for 2903: commit 6604c3c in the library module (2903helpers_darts_tcn_model_fixed.py):
# `x = x + residual` in _ResidualBlock.forward.
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
tcn = importlib.import_module("2903helpers_darts_tcn_model_fixed")


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
