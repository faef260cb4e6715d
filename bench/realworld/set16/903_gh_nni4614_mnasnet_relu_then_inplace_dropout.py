# source: https://github.com/microsoft/nni/pull/4614
# pattern: inplace_kwarg
# codemod_fixable: yes
# error: A
# ref_semantics: same
# NNI (neural architecture search), examples/nas/multi-trial/mnasnet/base_mnasnet.py, MNASNet: the classifier is
# `nn.Sequential(nn.Dropout(p=dropout, inplace=True), nn.Linear(1280, num_classes))` and forward ends with
# `x = x.mean([2, 3]); x = F.relu(x); return self.classifier(x)`; F.relu saved its output for backward and the
# in-place dropout overwrites it, so training a sampled architecture fails ("one of the variables needed for gradient
# computation has been modified by an inplace operation", issue #4592). PR #4614 ("Fix bug Issue4592", merged; the
# reviewer asks why `inplace=True` breaks it, the author answers with that error): `nn.Dropout(p=dropout)`.
# Stand-ins: nni.retiarii's nn wrappers are plain torch.nn; the two `nn.Placeholder` mutables (filled by the NAS
# mutator) are replaced by the candidate op MobileConv with fixed choices (kernel 3, skip 'no', 16 and 24 filters);
# the final mapping uses 64 channels instead of 1280 and the depths are taken as given; input 2 x 3 x 16 x 16,
# 10 classes; loss: cross-entropy; dropout is seeded.
import torch
import torch.nn as nn
import torch.nn.functional as F

BN_MOMENTUM = 1 - 0.9997
_BN_MOMENTUM = 1 - 0.9997


class MobileConv(nn.Module):
    def __init__(self, kernel_size, in_ch, out_ch, skip, exp_ratio, stride):
        super().__init__()
        self.kernel_size = kernel_size
        self.in_ch = in_ch
        self.out_ch = out_ch
        self.skip = skip
        self.exp_ratio = exp_ratio
        self.stride = stride

        mid_ch = in_ch * exp_ratio
        self.layers = nn.Sequential(
            # Pointwise
            nn.Conv2d(in_ch, mid_ch, 1, bias=False),
            nn.BatchNorm2d(mid_ch, momentum=BN_MOMENTUM),
            nn.ReLU(inplace=True),
            # Depthwise
            nn.Conv2d(mid_ch, mid_ch, kernel_size, padding=(kernel_size - 1) // 2,
                      stride=stride, groups=mid_ch, bias=False),
            nn.BatchNorm2d(mid_ch, momentum=BN_MOMENTUM),
            nn.ReLU(inplace=True),
            # Linear pointwise. Note that there's no activation.
            nn.Conv2d(mid_ch, out_ch, 1, bias=False),
            nn.BatchNorm2d(out_ch, momentum=BN_MOMENTUM))

    def forward(self, x):
        out = self.layers(x)
        if self.skip == 'identity':
            out = out + x
        return out


class MNASNet(nn.Module):
    def __init__(self, depths, num_classes=1000, dropout=0.2, last_channels=1280):
        super().__init__()
        self.num_classes = num_classes
        exp_ratios = [3, 3, 3, 6, 6, 6, 6]
        strides = [1, 2, 2, 2, 1, 2, 1]
        layers = [
            # First layer: regular conv.
            nn.Conv2d(3, depths[0], 3, padding=1, stride=2, bias=False),
            nn.BatchNorm2d(depths[0], momentum=_BN_MOMENTUM),
            nn.ReLU(inplace=True),
        ]
        # the two mutables, as sampled: MobileConv, kernel 3, no skip
        layers.append(MobileConv(3, depths[0], 16, 'no', exp_ratios[0], strides[0]))
        layers.append(MobileConv(3, 16, depths[7], 'no', exp_ratios[1], strides[1]))
        layers += [
            # Final mapping to classifier input.
            nn.Conv2d(depths[7], last_channels, 1, padding=0, stride=1, bias=False),
            nn.BatchNorm2d(last_channels, momentum=_BN_MOMENTUM),
            nn.ReLU(inplace=True),
        ]
        self.layers = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout, inplace=True),
                                        nn.Linear(last_channels, num_classes))

    def forward(self, x):
        x = self.layers(x)
        # Equivalent to global avgpool and removing H and W dimensions.
        x = x.mean([2, 3])
        x = F.relu(x)
        return self.classifier(x)


def compute():
    torch.manual_seed(0)
    model = MNASNet([8, 16, 24, 40, 80, 96, 192, 24], num_classes=10, last_channels=64)
    x = torch.randn(2, 3, 16, 16)
    y = torch.tensor([3, 7])
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
