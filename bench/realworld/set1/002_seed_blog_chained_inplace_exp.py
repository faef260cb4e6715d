# source: seed blog post
# pattern: inplace_method
# codemod_fixable: yes
# error: A
# ref_semantics: same
# b += 1; b *= c + a; d = b.exp_(); d *= 5 -- exp_ saves its result, which the aliasing `d *= 5` then overwrites.
import torch


def compute():
    torch.manual_seed(0)
    a = torch.rand(1, requires_grad=True)
    c = torch.rand(1, requires_grad=True)
    b = a ** 2 * c ** 2
    b += 1
    b *= c + a
    d = b.exp_()
    d *= 5
    b.backward()
    return {"a": a.grad, "c": c.grad}


if __name__ == "__main__":
    compute()
