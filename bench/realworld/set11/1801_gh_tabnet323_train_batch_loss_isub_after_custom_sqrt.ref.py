# reference fix for 1801: commit 423f7c4 (PR #323) in the library module (1801helpers_tabnet_abstract_model_fixed.py):
# `loss = loss - self.lambda_sparse * M_loss`.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
tabnet = importlib.import_module("1801helpers_tabnet_abstract_model_fixed")


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
