# source: https://github.com/pytorch/pytorch/issues/36470
# pattern: subscript_assign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# Recurrence f(n) = Sigmoid(f(n-1) * x) written into a preallocated buffer: f[i] = f[i-1]*x saves the view f[i-1],
# and later writes into f bump the shared version counter.
import torch


def compute():
    torch.manual_seed(0)
    x = torch.ones(1)
    x.requires_grad_()
    a = 1
    f = torch.zeros(10)
    f[0] = a
    for i in range(1, 10):
        f[i] = f[i-1]*x
        f[i] = 1/(1.0+torch.exp(-f[i]))
    loss = torch.sum(f)
    grad = torch.autograd.grad(loss, [x])[0]
    return {"x": grad}


if __name__ == "__main__":
    compute()
