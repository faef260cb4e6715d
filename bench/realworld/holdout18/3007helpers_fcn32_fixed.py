# Library module for case 3007 (reference: the fix of commit 2c72b71, `nn.Dropout()` after each in-place ReLU).
# ZijunDeng/pytorch-semantic-segmentation, models/fcn32.py (_FCN32Base, FCN32VGG) and utils/misc.py
# (get_upsampling_weight, CrossEntropyLoss2d), read at the parent of commit 2c72b71 ("fix bugs of models (consequently
# using of inplace operation)", 2017-08-29). Written anew at small size (not copied): the FCN-32s base (features,
# score head, a ConvTranspose2d upsampler initialised with a bilinear kernel, the crop of the upsampled scores), and the
# VGG variant whose fully convolutional head is `conv_fc6, nn.ReLU(inplace=True), nn.Dropout(inplace=True), conv_fc7,
# nn.ReLU(inplace=True), nn.Dropout(inplace=True), score5` (the statement at fault: each in-place Dropout rewrites the
# output of the in-place ReLU just before it, which ReLU's backward saved), with the score layer initialised to zero
# and the features' first convolution padded by 100, follow the source.
# Stand-ins: VGG16's 13-convolution feature extractor (loaded from a local checkpoint, or randomly initialised) is two
# 3x3 convolutions of 8 and 16 channels with in-place ReLUs and ceil-mode max pools (downsampling by 4, not 32);
# fc6 / fc7 have 32 channels instead of 4096 and are initialised randomly instead of from VGG's classifier; the
# upsampler is kernel 8 / stride 4 to match, and the crop offset (19 for VGG's stride 32) is 88, where this smaller
# network's scores line up with the image; CrossEntropyLoss2d uses `F.nll_loss` on
# `F.log_softmax(inputs, dim=1)` (the source's NLLLoss2d and implicit-dim log_softmax are gone from torch).
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


def get_upsampling_weight(in_channels, out_channels, kernel_size):
    factor = (kernel_size + 1) // 2
    if kernel_size % 2 == 1:
        center = factor - 1
    else:
        center = factor - 0.5
    og = np.ogrid[:kernel_size, :kernel_size]
    filt = (1 - abs(og[0] - center) / factor) * (1 - abs(og[1] - center) / factor)
    weight = np.zeros((in_channels, out_channels, kernel_size, kernel_size), dtype=np.float64)
    weight[range(in_channels), range(out_channels), :, :] = filt
    return torch.from_numpy(weight).float()


class CrossEntropyLoss2d(nn.Module):
    def __init__(self, weight=None, ignore_index=255):
        super(CrossEntropyLoss2d, self).__init__()
        self.weight, self.ignore_index = weight, ignore_index

    def forward(self, inputs, targets):
        return F.nll_loss(F.log_softmax(inputs, dim=1), targets, weight=self.weight, ignore_index=self.ignore_index)


def small_vgg_features():
    return [nn.Conv2d(3, 8, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2, 2),
            nn.Conv2d(8, 16, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2, 2)]


class _FCN32Base(nn.Module):
    def __init__(self, num_classes):
        super(_FCN32Base, self).__init__()
        self.features5 = None
        self.score5 = None
        self.upscore5 = nn.ConvTranspose2d(num_classes, num_classes, kernel_size=8, stride=4, bias=False)
        self.upscore5.weight.data.copy_(get_upsampling_weight(num_classes, num_classes, 8))

    def forward(self, x):
        y = self.features5(x)
        y = self.score5(y)
        y_up = self.upscore5(y)
        return y_up[:, :, 88: (88 + x.size()[2]), 88: (88 + x.size()[3])].contiguous()


class FCN32VGG(_FCN32Base):
    def __init__(self, num_classes):
        super(FCN32VGG, self).__init__(num_classes)
        features = small_vgg_features()
        features[0].padding = (100, 100)
        for f in features:
            if 'MaxPool' in f.__class__.__name__:
                f.ceil_mode = True
            elif 'ReLU' in f.__class__.__name__:
                f.inplace = True
        self.features5 = nn.Sequential(*features)

        conv_fc6 = nn.Conv2d(16, 32, kernel_size=7)
        conv_fc7 = nn.Conv2d(32, 32, kernel_size=1)
        score5 = nn.Conv2d(32, num_classes, kernel_size=1)
        score5.weight.data.zero_()
        score5.bias.data.zero_()
        self.score5 = nn.Sequential(
            conv_fc6, nn.ReLU(inplace=True), nn.Dropout(),
            conv_fc7, nn.ReLU(inplace=True), nn.Dropout(),
            score5
        )
