# reference fix for 2203: the answer in pytorch issue #15428: the residual branch's leading activation without
# `inplace=True` (`nn.ReLU(inplace=False)`, as the author's later xception.py has it), so x is left intact for the
# shortcut conv that saved it.
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
        if start_with_relu: layers.append(nn.ReLU(inplace=False))
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
