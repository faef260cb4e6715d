# source: https://github.com/pytorch/pytorch/issues/74874
# pattern: subscript_assign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# Inputs and intermediate results are written into one zero buffer; with op=torch.mul the products save views of
# the buffer, and the following writes into it invalidate them (works with torch.add, fails with torch.mul).
import torch
from torch import Tensor


def reduce(x: Tensor, y: Tensor, z: Tensor, op) -> Tensor:
    tensor = torch.zeros((5,), dtype=torch.float32, requires_grad=False)
    tensor[0] = x
    tensor[1] = y
    tensor[3] = z

    tensor[2] = op(tensor[0], tensor[1])
    tensor[4] = op(tensor[2], tensor[3])
    return tensor[4]


def compute():
    torch.manual_seed(0)
    inputs = [
        torch.randn((1,), requires_grad=True),
        torch.randn((1,), requires_grad=True),
        torch.randn((1,), requires_grad=True),
    ]
    out = reduce(*inputs, op=torch.mul)
    grad = torch.autograd.grad(
        out, inputs, torch.randn_like(out),
    )
    return {"x": grad[0], "y": grad[1], "z": grad[2]}


if __name__ == "__main__":
    compute()
