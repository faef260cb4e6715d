# source: https://github.com/pytorch/pytorch/issues/36608
# error: C (Output 0 of UnbindBackward0 is a view and is being modified inplace)
import torch


def main():
    root = torch.arange(9.).reshape(3, 3).requires_grad_()
    x = root.clone()
    v1 = x.unbind()
    v1[0].mul_(2)
    out = x.sum()
    out.backward()
    return [out.detach(), root.grad]
