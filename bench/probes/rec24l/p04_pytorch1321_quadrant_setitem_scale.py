# source: https://github.com/pytorch/pytorch/issues/1321
# error: A
# A quadrant of a feature map is overwritten with itself times a learned factor;
# the multiplication saved the quadrant (a view of x11) for backward.
import torch
import torch.nn as nn


class QuadrantNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.gate = nn.Linear(4, 1)

    def forward(self, x, s):
        x11 = self.conv(x)
        xx1 = torch.sigmoid(self.gate(s))
        w_f, h_f = x11.shape[2], x11.shape[3]
        x11[:, :, 0:int(w_f / 2), 0:int(h_f / 2)] = x11[:, :, 0:int(w_f / 2), 0:int(h_f / 2)] * xx1[0]
        return x11


def compute():
    torch.manual_seed(0)
    net = QuadrantNet()
    out = net(torch.randn(1, 3, 6, 6), torch.randn(4, 4))
    out.sum().backward()
    return {n: p.grad for n, p in net.named_parameters()}


if __name__ == "__main__":
    compute()
