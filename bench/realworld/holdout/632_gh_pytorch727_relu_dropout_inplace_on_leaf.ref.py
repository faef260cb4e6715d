# reference fix for 632 (maintainer's answer in the thread): remove the `inplace` flags.
import torch
import torch.nn.functional as F


def compute():
    torch.manual_seed(0)
    x_leaf = torch.randn(4, 6, 10, 10).requires_grad_(True)
    x = x_leaf
    x = F.relu(x)
    x = F.dropout(x, p=0.1)
    result = torch.sum(x)
    result.backward()
    return {"x": x_leaf.grad}


if __name__ == "__main__":
    compute()
