# source: https://github.com/PingoLH/FCHarDNet/issues/61
# pattern: subscript_assign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# Copying reference weights into a conv with `conv.weight[:,:,:,:] = W[:,:,:,:]` while grad mode is on
# ("a view of a leaf Variable that requires grad is being used in an in-place operation").
import torch
import torch.nn as nn


def compute():
    torch.manual_seed(0)
    x_list = [4, 6, 6]
    img_sz = 5
    output_ch = 7
    X_list = [torch.randn(2, x, img_sz, img_sz) for x in x_list]

    W = torch.randn(output_ch, sum(x_list), 3, 3)
    bias = torch.randn(output_ch)

    conv = nn.Conv2d(sum(x_list), output_ch, kernel_size=3, stride=1, bias=True, padding=1)
    conv.weight[:,:,:,:] = W[:,:,:,:]
    conv.bias[:] = bias[:]

    out2 = conv(torch.cat(X_list, 1))
    out2.pow(2).mean().backward()
    return {"conv.weight": conv.weight.grad, "conv.bias": conv.bias.grad}


if __name__ == "__main__":
    compute()
