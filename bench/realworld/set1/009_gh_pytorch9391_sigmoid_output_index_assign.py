# source: https://github.com/pytorch/pytorch/issues/9391
# pattern: subscript_assign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# sigmoid saves its output; b[1] = 2 overwrites it before backward.
import torch


def compute():
    torch.manual_seed(0)
    a = torch.tensor([1, 2, 3.], requires_grad=True)
    b = a.sigmoid()
    b[1] = 2
    b.sum().backward()
    return {"a": a.grad}


if __name__ == "__main__":
    compute()
