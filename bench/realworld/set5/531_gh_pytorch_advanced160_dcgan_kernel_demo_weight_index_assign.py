# source: https://github.com/YutaroOgawa/pytorch_advanced/issues/160
# pattern: subscript_assign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# "5-1-2_DCGANで現れるメッセージについて" (book "PyTorch advanced", chapter 5 DCGAN notebook 5-1_2_DCGAN.ipynb, the
# "transposed convolution example" cell): to show what Conv2d and ConvTranspose2d compute, the cell writes a
# hand-made 2x2 kernel into the freshly built layers element by element, `m.weight[0, 0, 0, 0] = 1` ... -> with
# current torch "a view of a leaf Variable that requires grad is being used in an in-place operation." The answer in
# the thread (yoshiyama), adopted by the author in commit eaa5ef1 ("#160 に従い、m.weight→m.weight.dataに修正"):
# write through `m.weight.data[...]`.
# Harness: the cell without prints; the two outputs are summed and backpropagated so that the kernels' gradients
# can be compared as well.
import torch
import torch.nn as nn


def compute():
    torch.manual_seed(0)
    input = torch.tensor([[[[1., 1.], [2., 2.]]]])

    # 通常の畳み込み (ordinary convolution)
    m = nn.Conv2d(1, 1, 2, stride=1, bias=False)
    m.weight[0, 0, 0, 0] = 1
    m.weight[0, 0, 0, 1] = 2
    m.weight[0, 0, 1, 0] = 3
    m.weight[0, 0, 1, 1] = 4
    conv = m
    conv_out = m(input)

    # 転置畳み込み (transposed convolution)
    m = nn.ConvTranspose2d(1, 1, 2, stride=1, bias=False)
    m.weight[0, 0, 0, 0] = 1
    m.weight[0, 0, 0, 1] = 2
    m.weight[0, 0, 1, 0] = 3
    m.weight[0, 0, 1, 1] = 4
    convt = m
    convt_out = m(input)

    (conv_out.sum() + (convt_out ** 2).sum()).backward()
    return {"conv_out": conv_out.detach().clone(), "convt_out": convt_out.detach().clone(),
            "conv.weight": conv.weight.detach().clone(), "convt.weight": convt.weight.detach().clone(),
            "conv.weight.grad": conv.weight.grad.clone(), "convt.weight.grad": convt.weight.grad.clone()}


if __name__ == "__main__":
    compute()
