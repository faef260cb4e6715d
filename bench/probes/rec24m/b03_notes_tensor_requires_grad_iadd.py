# source: https://github.com/lhycms/Deep_Learning_Notes
# error: B
import torch


def main():
    w = torch.tensor([1.0, 2.0, 3.0])
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x + 1
    x += 1
    out = (x * w + y).sum()
    out.backward()
    return [out.detach(), x.grad]
