# source: https://github.com/pytorch/pytorch/issues/727
# pattern: inplace_kwarg
# codemod_fixable: yes
# error: B
# ref_semantics: same
# F.relu(x, inplace=True) followed by F.dropout(..., inplace=True) directly on a leaf input.
import torch
import torch.nn.functional as F


def compute():
    torch.manual_seed(0)
    x0 = torch.randn(4, 6, 10, 10, requires_grad=True)
    x = x0
    x = F.relu(x, inplace=True)
    x = F.dropout(x, p=0.1, inplace=True)
    result = torch.sum(x)
    result.backward()
    return {"x": x0.grad}


if __name__ == "__main__":
    compute()
