# source: https://github.com/pyg-team/pytorch-frame/commit/5ec461f03ac4034440f02751a19360580ed3328b
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# PyTorch Frame (pyg-team/pytorch-frame), PR #234 "Handle 0-row TensorFrame in torch_frame.nn.models" (merged as
# 5ec461f; the fix is its commit a355ce2, "remove in-place op"). The tabular ResNet's FCResidualBlock.forward ends
# with `out = self.dropout(self.relu(...))`, then `out += x` and a ReLU. For a batch of 0 rows, Dropout returns its
# (empty) input as-is, so `out` is the ReLU's output, which ReLU saved for backward; the PR's message quotes
# the error, "[torch.FloatTensor [0, 128]], which is output 0 of ReluBackward0, is at version 1; expected version 0"
# (fix: `out = out + x`).
# Library module: 3401helpers_torchframe_resnet.py (ref: ..._fixed.py), the source's FCResidualBlock and ResNet;
# stand-in there: the TensorFrame / StypeWiseFeatureEncoder is a LinearEncoder over numerical columns of a plain
# tensor. Stand-ins here: the training loop (Adam, regression with a sum-reduced MSE divided by the batch size, so
# that an empty batch adds a zero loss) over two mini-batches of a random table, the second one empty (the PR's
# author met it training on 0-row frames, as a split or a sampled subgraph gives them).
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
resnet = importlib.import_module("3401helpers_torchframe_resnet")


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
