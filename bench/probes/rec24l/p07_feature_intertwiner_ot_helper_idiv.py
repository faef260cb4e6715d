# source: https://github.com/hli2020/feature_intertwiner/issues/4
# error: A
# An optimal-transport module normalises its two inputs with /= before the cost matrix;
# torch.norm saved x and y for backward.
import torch
import torch.nn as nn

EPS = 1e-8


class OptTrans(nn.Module):
    def __init__(self, ch_x, ch_y):
        super().__init__()
        self.feat_x = nn.Linear(ch_x, 16)
        self.feat_y = nn.Linear(ch_y, 16)

    def forward(self, x, y):
        x = self.feat_x(x)
        y = self.feat_y(y)
        x /= (torch.norm(x, p=2, dim=1, keepdim=True) + EPS)
        y /= (torch.norm(y, p=2, dim=1, keepdim=True) + EPS)
        cost = 1 - x @ y.t()
        return cost.mean()


def compute():
    torch.manual_seed(0)
    ot = OptTrans(6, 5)
    loss = ot(torch.randn(4, 6), torch.randn(3, 5))
    loss.backward()
    return {n: p.grad for n, p in ot.named_parameters()}


if __name__ == "__main__":
    compute()
