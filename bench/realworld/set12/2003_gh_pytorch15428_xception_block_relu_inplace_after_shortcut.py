# source: https://github.com/pytorch/pytorch/issues/15428
# pattern: inplace_kwarg
# codemod_fixable: yes
# error: A
# ref_semantics: same
# Xception block (DeepLab-v3+). Issue #15428 "Maybe this is something about computing graph?": the reporter gets "one
# of the variables needed for gradient computation has been modified by an inplace operation" "just because I
# exchanged the order of two lines" of Block.forward: with `sc = self.shortcut(x)` (1x1 conv + BN, which saves x)
# computed before `resd = self.residual(x)` it fails. The answer (ChunML): "the first layer of `self.residual` is
# trying to modify `x` inplace, which makes it unavailable when back-propagation is performed ... remove
# `inplace=True` and your code will work just fine."
# The stored copy of the issue shows its SepConvBNReLU and the failing forward but is cut off before Block.__init__;
# ConvBNReLU, SepConvBNReLU and Block are therefore copied from the same author's xception.py in
# CoinCheung/DeepLab-v3-plus-cityscapes (first commit 9da72f8, 2019-02-08, seven weeks later; its SepConvBNReLU is the
# issue's, plus init_weight), where the residual's leading activation already reads `nn.ReLU(inplace=False)`: set
# back here to the `inplace=True` the answer removes, and forward put in the failing order (shortcut first).
# Harness (stand-in, modelled on the file's EntryFlow and __main__): ConvBNReLU(3, 8, stride 2) -> Block(8, 16,
# stride 2, start_with_relu=False) -> Block(16, 16, stride 2, start_with_relu=True), global average pool, a Linear
# classifier and cross-entropy on a random 2x3x32x32 batch in train mode; compute() returns every parameter's
# gradient.
import torch
import torch.nn as nn
import torch.nn.functional as F



class ConvBNReLU(nn.Module):
    def __init__(self,
            in_chan,
            out_chan,
            ks = 3,
            stride = 1,
            padding = 1,
            bias = False,
            *args, **kwargs):
        super(ConvBNReLU, self).__init__()
        self.conv = nn.Conv2d(in_chan,
                out_chan,
                kernel_size = ks,
                stride = stride,
                padding = padding,
                bias = bias)
        self.bn = nn.BatchNorm2d(out_chan)
        self.init_weight()

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        x = F.relu(x, inplace=True)
        return x

    def init_weight(self):
        for ly in self.children():
            if isinstance(ly, nn.Conv2d):
                nn.init.kaiming_normal_(ly.weight, a=1)
                if not ly.bias is None: nn.init.constant_(ly.bias, 0)


class SepConvBNReLU(nn.Module):
    def __init__(self,
            in_chan,
            out_chan,
            ks = 3,
            stride = 1,
            padding = 1,
            dilation = 1,
            bias = False,
            *args, **kwargs):
        super(SepConvBNReLU, self).__init__()

        self.conv = nn.Conv2d(in_chan,
                in_chan,
                kernel_size = ks,
                stride = stride,
                padding = dilation,
                dilation = dilation,
                groups = in_chan,
                bias = bias)
        self.bn = nn.BatchNorm2d(in_chan)
        self.pairwise = nn.Conv2d(in_chan,
                out_chan,
                kernel_size = 1,
                bias = bias)

        self.init_weight()

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        x = F.relu(x, inplace=True)
        x = self.pairwise(x)
        return x

    def init_weight(self):
        for ly in self.children():
            if isinstance(ly, nn.Conv2d):
                nn.init.kaiming_normal_(ly.weight, a=1)
                if not ly.bias is None: nn.init.constant_(ly.bias, 0)


class Block(nn.Module):
    def __init__(self,
            in_chan,
            out_chan,
            reps = 3,
            stride = 1,
            dilation = 1,
            start_with_relu = True,
            grow_layer = 0,
            bias = False,
            *args, **kwargs):
        super(Block, self).__init__()

        self.stride = stride
        self.in_chan = in_chan
        self.out_chan = out_chan
        # compute channels of each layer
        inchans = [in_chan] * reps
        outchans = [out_chan] * reps
        for i in range(reps):
            if i < grow_layer:
                inchans[i] = in_chan
                outchans[i] = in_chan
            else:
                inchans[i] = out_chan
                outchans[i] = out_chan
        inchans[grow_layer] = in_chan
        outchans[grow_layer] = out_chan

        # shortcut
        self.shortcut = nn.Sequential(*[
                nn.Conv2d(in_chan,
                    out_chan,
                    kernel_size = 1,
                    stride = stride,
                    bias = bias),
                nn.BatchNorm2d(out_chan),
            ])

        # residual
        layers = []
        if start_with_relu: layers.append(nn.ReLU(inplace=True))
        for i in range(reps-1):
            layers.append(SepConvBNReLU(inchans[i],
                    outchans[i],
                    kernel_size = 3,
                    stride = 1,
                    padding = dilation,
                    dilation = dilation,
                    bias = bias))
            layers.append(nn.BatchNorm2d(outchans[i]))
            layers.append(nn.ReLU(inplace=True))
        layers.append(SepConvBNReLU(inchans[-1],
                outchans[-1],
                kernel_size = 3,
                stride = stride, # stride always at the last
                padding = dilation,
                dilation = dilation,
                bias = bias))
        layers.append(nn.BatchNorm2d(outchans[i]))
        self.residual = nn.Sequential(*layers)

        self.init_weight()

    def forward(self, x):
        if not self.stride == 1 or not self.in_chan == self.out_chan:
            sc = self.shortcut(x)
        else:
            sc = x
        resd = self.residual(x)
        out = resd + sc
        return out

    def init_weight(self):
        for ly in self.shortcut.children():
            if isinstance(ly, nn.Conv2d):
                nn.init.kaiming_normal_(ly.weight, a=1)
                if not ly.bias is None: nn.init.constant_(ly.bias, 0)


def compute():
    torch.manual_seed(0)
    net = nn.Sequential(
        ConvBNReLU(3, 8, ks=3, stride=2, padding=1),
        Block(8, 16, reps=3, stride=2, dilation=1, start_with_relu=False, grow_layer=0),
        Block(16, 16, reps=3, stride=2, dilation=1, start_with_relu=True, grow_layer=0),
    )
    fc = nn.Linear(16, 10)
    net.train()
    x = torch.randn(2, 3, 32, 32)
    label = torch.tensor([1, 7])
    feat = net(x)
    logits = fc(F.avg_pool2d(feat, feat.size()[2:]).flatten(1))
    loss = F.cross_entropy(logits, label)
    loss.backward()
    out = {"grad.net." + n: p.grad.clone() for n, p in net.named_parameters()}
    out.update({"grad.fc." + n: p.grad.clone() for n, p in fc.named_parameters()})
    return out
