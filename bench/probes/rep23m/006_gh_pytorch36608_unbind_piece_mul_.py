# source: https://github.com/pytorch/pytorch/issues/36608
# pattern: unbind_piece_inplace
# codemod_fixable: yes
# error: C
# ref_semantics: same
# pytorch#36608 (autograd CreationMeta), its first lines: `x = root.clone(); v1 = x.unbind(); v1[0].mul_(2)` raises
# "Output 0 of UnbindBackward is a view and is being modified inplace ... You should replace the inplace operation by
# an out-of-place one", the fix the error message and the maintainers give. Stand-in: the rows of a 3x3 matrix
# scaled row by row, the first doubled, then summed with weights; the gradient of the root is read.
import torch


def compute():
    torch.manual_seed(0)
    root = torch.arange(9.).reshape(3, 3).requires_grad_()
    x = root.clone()
    v1 = x.unbind()
    v1[0].mul_(2)
    out = v1[0].sum() + 3 * v1[1].sum() + v1[2].pow(2).sum()
    out.backward()
    return {"root": root.grad}


if __name__ == "__main__":
    compute()
