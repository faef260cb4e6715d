# reference fix for 3401: pytorch-frame commit a355ce2 (PR #234) in the library module
# (3401helpers_torchframe_resnet_fixed.py): `out = out + x`.
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
resnet = importlib.import_module("3401helpers_torchframe_resnet_fixed")


def compute():
    torch.manual_seed(0)
    num_cols = 5
    feat = torch.randn(8, num_cols) * 3.0 + 1.0
    target = feat[:, :1] * 0.5 - feat[:, 1:2]
    model = resnet.ResNet(channels=8, out_channels=1, num_layers=3, num_cols=num_cols,
                          col_mean=feat.mean(0), col_std=feat.std(0), dropout_prob=0.2)
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    out = {}
    batches = [(feat[:6], target[:6]), (feat[6:6], target[6:6])]  # the second mini-batch has no rows
    for step, (x, y) in enumerate(batches):
        pred = model(x)
        loss = F.mse_loss(pred, y, reduction="sum") / max(x.size(0), 1)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        out["loss%d" % step] = loss.detach()
        out["lin1.grad%d" % step] = model.backbone[0].lin1.weight.grad.clone()
        out["encoder.grad%d" % step] = model.encoder.weight.grad.clone()
    out["lin2.after"] = model.backbone[1].lin2.weight.detach().clone()
    out["decoder.after"] = model.decoder[-1].weight.detach().clone()
    return out


if __name__ == "__main__":
    compute()
