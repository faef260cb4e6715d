# source: own knowledge of attention-UNet code (a down block returns (pooled, skip); the skip is gated
# in place after the attention gate read it)
# error: A (`skip` is saved by `skip * torch.sigmoid(...)`'s multiplication, then scaled in place)
import torch
import torch.nn as nn


class Down(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        skip = torch.relu(self.conv(x))
        return self.pool(skip), skip


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.down1 = Down(1, 4)
        self.att = nn.Conv2d(4, 4, 1)
        self.up = nn.Upsample(scale_factor=2)
        self.out = nn.Conv2d(8, 1, 1)

    def forward(self, x):
        pooled, skip = self.down1(x)
        attended = skip * torch.sigmoid(self.att(skip))
        skip *= 0.5
        return self.out(torch.cat([self.up(pooled), attended + skip], 1))


def main():
    torch.manual_seed(0)
    net = Net()
    y = net(torch.randn(2, 1, 8, 8))
    y.mean().backward()
    return [y.detach()] + [p.grad for p in net.parameters()]
