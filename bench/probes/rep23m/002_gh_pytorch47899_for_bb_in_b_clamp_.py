# source: https://github.com/pytorch/pytorch/issues/47899
# pattern: unbind_loop_inplace
# codemod_fixable: yes
# error: C
# ref_semantics: same
# "Tensor iteration changes behavior in 1.7": `for bb in b: bb[:, 0].clamp_(min=0, max=0.3); bb[:, 1].clamp_(...)`
# worked in 1.6 (iteration was a map of self[i]) and fails since 1.7 (iteration is `unbind`): "Output 0 of
# UnbindBackward0 is a view and its base or another view of its base has been modified inplace". Fix in the thread
# (zanshuxun): iterate indices, `for i in range(len(b)): bb = b[i]; ...`. Stand-ins: b is a batch of predicted
# boxes (a linear layer's output reshaped), 2 x 5 x 5; the loss is their sum of squares.
import torch
import torch.nn as nn


def clip_boxes(b):
    for bb in b:
        bb[:, 0].clamp_(min=0, max=0.3)
        bb[:, 1].clamp_(min=0, max=0.3)
    return b


def compute():
    torch.manual_seed(0)
    head = nn.Linear(4, 25)
    feats = torch.randn(2, 4)
    b = head(feats).view(2, 5, 5)
    b = clip_boxes(b)
    b.pow(2).sum().backward()
    return {"weight": head.weight.grad, "bias": head.bias.grad}


if __name__ == "__main__":
    compute()
