# source: seed blog post
# pattern: subscript_assign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# d[:] = 1 overwrites the output of a matmul after the next matmul saved it for backward (MvBackward needs d).
import torch


def compute():
    torch.manual_seed(0)
    x = torch.FloatTensor([[1., 2.]])
    w1 = torch.FloatTensor([[2.], [1.]])
    w2 = torch.FloatTensor([3.])
    w1.requires_grad = True
    w2.requires_grad = True
    d = torch.matmul(x, w1)
    f = torch.matmul(d, w2)
    d[:] = 1
    f.backward()
    return {"w1": w1.grad, "w2": w2.grad}


if __name__ == "__main__":
    compute()
