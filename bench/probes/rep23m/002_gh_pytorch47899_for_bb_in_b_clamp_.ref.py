# reference: the thread's fix (iterate indices instead of unbinding)
import torch
import torch.nn as nn


def clip_boxes(b):
    for i in range(len(b)):
        bb = b[i]
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
