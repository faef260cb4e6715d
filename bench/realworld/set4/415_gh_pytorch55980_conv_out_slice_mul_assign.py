# source: https://github.com/pytorch/pytorch/issues/55980
# pattern: subscript_assign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# The reporter's Model scales one pixel column of a conv output by another conv's output:
# `x[0, :, 0, 0] = x[0, :, 0, 0] * var`. The multiplication saves its operand `x[0, :, 0, 0]` (a view of x) for
# var's gradient, and the slice assignment then writes into that same storage. (`x[0, :, 0, 0] *= var` works,
# because the in-place mul knows it clobbers its input.) Fix given by ezyang in the thread:
# `x[0, :, 0, 0] = x[0, :, 0, 0].clone() * var`.
import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(12, 12, 3)

    def forward(self, x, y):
        x = self.conv(x)
        y = self.conv(y)
        var = y.flatten()
        x[0, :, 0, 0] = x[0, :, 0, 0] * var

        loss = torch.mean(x)
        return loss


def compute():
    torch.manual_seed(0)
    model = Model()
    x = torch.randn([1, 12, 3, 3]).float()
    y = torch.randn([1, 12, 3, 3]).float()
    loss = model(x, y)
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
