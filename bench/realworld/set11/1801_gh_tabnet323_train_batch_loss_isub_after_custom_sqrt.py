# source: https://github.com/dreamquark-ai/tabnet/commit/423f7c43647f8be53f28c9c6061031b7a2644d20 (PR #323, issue #312)
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# pytorch-tabnet (tabular deep learning), TabModel._train_batch: the sparsity regulariser is subtracted from the
# loss in place, `loss -= self.lambda_sparse * M_loss`. With the custom loss of issue #312 (an RMSELoss module,
# `torch.sqrt(nn.MSELoss()(x, y) + eps)`), SqrtBackward saved that output, so fit() fails with "modified by an
# inplace operation ... output 0 of SqrtBackward". PR #323 (commit 423f7c4) writes `loss = loss - ...`.
# The library module is 1801helpers_tabnet_abstract_model.py (ref: ..._fixed.py); its header names its stand-ins.
# Harness (stand-in): the RMSELoss of issue #312, copied; in place of the TabNet network a small module that returns
# (output, M_loss) the way TabNet does: a feature mask M = softmax(Linear(x)), M_loss the mean over the batch of
# sum(M * log(M + 1e-15)) as in TabNet's encoder, output Linear(x * M); TabNetRegressor defaults lambda_sparse 1e-3,
# clip_value 1, Adam lr 2e-2; two batches of 16 rows of 6 features; the network's parameters after both steps are
# compared.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
tabnet = importlib.import_module("1801helpers_tabnet_abstract_model")


class RMSELoss(torch.nn.Module):
    def __init__(self):
        super(RMSELoss,self).__init__()
    def forward(self,x,y):
        criterion = nn.MSELoss()
        eps = 1e-6
        loss = torch.sqrt(criterion(x, y) + eps)
        return loss


class MaskedRegressor(nn.Module):
    """Stand-in for the TabNet network: returns (output, M_loss) as TabNet does."""

    def __init__(self, n_features, n_out):
        super().__init__()
        self.attention = nn.Linear(n_features, n_features)
        self.head = nn.Linear(n_features, n_out)

    def forward(self, x):
        M = torch.softmax(self.attention(x), dim=-1)
        M_loss = torch.mean(torch.sum(torch.mul(M, torch.log(M + 1e-15)), dim=1))
        return self.head(x * M), M_loss


def compute():
    torch.manual_seed(0)
    network = MaskedRegressor(6, 1)
    optimizer = torch.optim.Adam(network.parameters(), lr=2e-2)
    model = tabnet.TabNetRegressor(network, optimizer, RMSELoss(), lambda_sparse=1e-3, clip_value=1)
    logs = []
    for _ in range(2):
        X = torch.randn(16, 6)
        y = X[:, :1] * 0.5 + 0.1 * torch.randn(16, 1)
        logs.append(model._train_batch(X, y)["loss"])
    out = {"network.%s" % k: p.detach().clone() for k, p in network.named_parameters()}
    out["losses"] = torch.tensor(logs)
    return out


if __name__ == "__main__":
    compute()
