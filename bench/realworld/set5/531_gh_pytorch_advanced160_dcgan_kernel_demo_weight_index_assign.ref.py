# reference fix for 531 (the answer in the thread, adopted in commit eaa5ef1): write the kernel through m.weight.data[...].
import torch
import torch.nn as nn


def compute():
    torch.manual_seed(0)
    input = torch.tensor([[[[1., 1.], [2., 2.]]]])

    # 通常の畳み込み (ordinary convolution)
    m = nn.Conv2d(1, 1, 2, stride=1, bias=False)
    m.weight.data[0, 0, 0, 0] = 1
    m.weight.data[0, 0, 0, 1] = 2
    m.weight.data[0, 0, 1, 0] = 3
    m.weight.data[0, 0, 1, 1] = 4
    conv = m
    conv_out = m(input)

    # 転置畳み込み (transposed convolution)
    m = nn.ConvTranspose2d(1, 1, 2, stride=1, bias=False)
    m.weight.data[0, 0, 0, 0] = 1
    m.weight.data[0, 0, 0, 1] = 2
    m.weight.data[0, 0, 1, 0] = 3
    m.weight.data[0, 0, 1, 1] = 4
    convt = m
    convt_out = m(input)

    (conv_out.sum() + (convt_out ** 2).sum()).backward()
    return {"conv_out": conv_out.detach().clone(), "convt_out": convt_out.detach().clone(),
            "conv.weight": conv.weight.detach().clone(), "convt.weight": convt.weight.detach().clone(),
            "conv.weight.grad": conv.weight.grad.clone(), "convt.weight.grad": convt.weight.grad.clone()}


if __name__ == "__main__":
    compute()
