# reference fix for 3405: pytorch-frame commit 5a7791c (PR #26) in the library module
# (3405helpers_torchframe_excelformer_decoder_fixed.py): `with torch.no_grad(): self.activation.weight.fill_(0.25)`.
import importlib
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
decoder_mod = importlib.import_module("3405helpers_torchframe_excelformer_decoder_fixed")


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
