# source: https://discuss.pytorch.org/t/inplace-operation-changes-is-leaf-attribute/120297
# pattern: inplace_method
# codemod_fixable: yes
# error: B
# ref_semantics: same
# index_copy_ (operation 4 of the thread) applied directly to a leaf that requires grad.
import torch


def compute():
    torch.manual_seed(0)
    c = torch.randn(10, 3, 2, 32, requires_grad=True)
    # operation 4
    c.index_copy_(3, torch.tensor(10), torch.randn(10, 3, 2, 1))
    loss = (c * c).sum()
    loss.backward()
    return {"c": c.grad}


if __name__ == "__main__":
    compute()
