# source: https://github.com/pytorch/pytorch/issues/727
# pattern: inplace_kwarg
# codemod_fixable: yes
# error: B
# ref_semantics: same
# "F.relu(inplace) followed by F.dropout(inplace) breaks backward pass": the reporter's snippet builds an input
# Variable with requires_grad=True and applies `F.relu(x, inplace=True)` and then `F.dropout(x, p=0.1,
# inplace=True)` to it. On torch 0.1 this broke the backward pass; on torch 2.13 the first in-place ReLU on the
# grad-requiring leaf raises "a leaf Variable that requires grad is being used in an in-place operation".
# Maintainer's answer (apaszke): in-place ops can't be applied to leaf Variables - "Just remove the `inplace` flag".
# numpy input replaced by torch.randn; the gradient of x is returned.
import torch
import torch.nn.functional as F


def compute():
    torch.manual_seed(0)
    x_leaf = torch.randn(4, 6, 10, 10).requires_grad_(True)
    x = x_leaf
    x = F.relu(x, inplace=True)
    x = F.dropout(x, p=0.1, inplace=True)
    result = torch.sum(x)
    result.backward()
    return {"x": x_leaf.grad}


if __name__ == "__main__":
    compute()
