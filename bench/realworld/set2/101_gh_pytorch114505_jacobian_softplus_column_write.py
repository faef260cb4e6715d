# source: https://github.com/pytorch/pytorch/issues/114505
# pattern: subscript_assign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# func() builds its output in a zeros buffer column by column and computes column 1 as Softplus of column 0 read
# back from the same buffer. Softplus saves that column (a view of b) for backward, and the write into b[:, 1]
# bumps the shared version counter, so torch.autograd.functional.jacobian fails.
import torch


def func(a):
    b = torch.zeros_like(a)
    b[:, 0] = a[:, 0]
    b[:, 1] = torch.nn.Softplus()(b[:, 0])
    return b


def compute():
    torch.manual_seed(0)
    a = torch.randn(3, 2)
    jac = torch.autograd.functional.jacobian(func, a)
    return {"jacobian": jac}


if __name__ == "__main__":
    compute()
