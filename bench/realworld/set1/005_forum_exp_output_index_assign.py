# source: https://discuss.pytorch.org/t/when-inplace-operation-are-allowed-and-when-not/169583/3
# pattern: subscript_assign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# exp() saves its output for backward; writing uexp[0] = 666 after the loss is built breaks the second backward.
import torch


def compute():
    torch.manual_seed(0)
    t = torch.arange(3.0, requires_grad=True)
    u = 2 * t  # (so it won't be a leaf variable)
    uexp = u.exp()  # uexp is the gradient of u.exp()
    loss = uexp.sum()  # (some dummy loss)
    u[0] = 666  # inplace modification of u
    loss.backward(retain_graph=True)  # okay
    uexp[0] = 666  # inplace modification of uexp
    loss.backward()
    return {"t": t.grad}


if __name__ == "__main__":
    compute()
