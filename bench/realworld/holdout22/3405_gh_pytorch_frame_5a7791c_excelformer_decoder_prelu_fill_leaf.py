# source: https://github.com/pyg-team/pytorch-frame/commit/5a7791cf03e18ab2ceddc12d29648f9d2fb06415
# pattern: inplace_method
# codemod_fixable: yes
# error: B
# ref_semantics: differs
# PyTorch Frame (pyg-team/pytorch-frame), PR #26 "ExcelFormer Implementation" (merged as e0edc482, August 2023).
# Its commit 38b5870 ("reset parameters for PReLU") made ExcelFormerDecoder.reset_parameters, which __init__ calls,
# fill the PReLU's weight in place: `self.activation.weight.fill_(1.0)`. The weight is a Parameter (a leaf that
# requires grad), so building the decoder raises "a leaf Variable that requires grad is being used in an in-place
# operation." The next commits of the PR (3844f86, then 5a7791c) wrap the fill in `with torch.no_grad():` and change
# the value to PReLU's default, `self.activation.weight.fill_(0.25)`; the reference is that commit, so its PReLU
# starts at 0.25 where the original meant 1.0 (`ref_semantics: differs`; the no_grad wrap alone is the meaning-
# preserving part of the fix).
# Library module: 3405helpers_torchframe_excelformer_decoder.py (ref: ..._fixed.py), the source's Decoder and
# ExcelFormerDecoder. Stand-ins here: the column-wise encoder in front of the decoder (a per-column linear embedding
# in place of ExcelFormer's encoder and convs) and one Adam step of a regression on a random table.
import importlib
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
decoder_mod = importlib.import_module("3405helpers_torchframe_excelformer_decoder")


class ColumnEncoderModel(nn.Module):
    """Stand-in: embeds each numerical column into `channels` features, then the source's ExcelFormerDecoder."""

    def __init__(self, num_cols=5, channels=8, out_channels=1):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(num_cols, channels) * 0.1)
        self.bias = nn.Parameter(torch.zeros(num_cols, channels))
        self.decoder = decoder_mod.ExcelFormerDecoder(channels, out_channels, num_cols)

    def forward(self, feat):
        x = feat.unsqueeze(-1) * self.weight + self.bias  # [batch_size, num_cols, channels]
        return self.decoder(x)


def compute():
    torch.manual_seed(0)
    feat = torch.randn(16, 5)
    target = feat[:, :1] - 0.5 * feat[:, 2:3]
    model = ColumnEncoderModel()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    loss = F.mse_loss(model(feat), target)
    optimizer.zero_grad()
    loss.backward()
    out = {
        "loss": loss.detach(),
        "prelu.weight.grad": model.decoder.activation.weight.grad.clone(),
        "lin_f.weight.grad": model.decoder.lin_f.weight.grad.clone(),
        "encoder.weight.grad": model.weight.grad.clone(),
    }
    optimizer.step()
    out["prelu.weight.after"] = model.decoder.activation.weight.detach().clone()
    return out


if __name__ == "__main__":
    compute()
