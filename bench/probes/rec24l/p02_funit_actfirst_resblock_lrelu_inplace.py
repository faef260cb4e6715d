# source: https://github.com/NVlabs/FUNIT/issues/23
# error: A
# An activation-first residual block: the learned shortcut convolves x (the conv saves x),
# then the first conv block applies LeakyReLU(inplace=True) to the same x.
import torch
import torch.nn as nn


class Conv2dBlock(nn.Module):
    def __init__(self, in_dim, out_dim, ks, st, padding=0, activation='relu',
                 use_bias=True, activation_first=False):
        super().__init__()
        self.use_bias = use_bias
        self.activation_first = activation_first
        self.pad = nn.ZeroPad2d(padding)
        if activation == 'relu':
            self.activation = nn.ReLU(inplace=True)
        elif activation == 'lrelu':
            self.activation = nn.LeakyReLU(0.2, inplace=True)
        else:
            self.activation = None
        self.conv = nn.Conv2d(in_dim, out_dim, ks, st, bias=self.use_bias)

    def forward(self, x):
        if self.activation_first:
            if self.activation:
                x = self.activation(x)
            x = self.conv(self.pad(x))
        else:
            x = self.conv(self.pad(x))
            if self.activation:
                x = self.activation(x)
        return x


class ActFirstResBlock(nn.Module):
    def __init__(self, fin, fout, fhid=None, activation='lrelu'):
        super().__init__()
        self.learned_shortcut = (fin != fout)
        self.fhid = min(fin, fout) if fhid is None else fhid
        self.conv_0 = Conv2dBlock(fin, self.fhid, 3, 1, padding=1,
                                  activation=activation, activation_first=True)
        self.conv_1 = Conv2dBlock(self.fhid, fout, 3, 1, padding=1,
                                  activation=activation, activation_first=True)
        if self.learned_shortcut:
            self.conv_s = nn.Conv2d(fin, fout, 1, 1, bias=False)

    def forward(self, x):
        x_s = self.conv_s(x) if self.learned_shortcut else x
        dx = self.conv_0(x)
        dx = self.conv_1(dx)
        out = x_s + dx
        return out


def compute():
    torch.manual_seed(0)
    stem = nn.Conv2d(3, 4, 3, padding=1)
    block = ActFirstResBlock(4, 6)
    img = torch.randn(2, 3, 8, 8)
    out = block(stem(img))
    out.mean().backward()
    return {"stem.weight": stem.weight.grad, "conv_s": block.conv_s.weight.grad}


if __name__ == "__main__":
    compute()
