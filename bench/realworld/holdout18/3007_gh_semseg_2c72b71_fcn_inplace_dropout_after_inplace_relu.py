# source: https://github.com/ZijunDeng/pytorch-semantic-segmentation/commit/2c72b7185776dd82eb09625c598a58749dd1519b
# pattern: inplace_kwarg
# codemod_fixable: yes
# error: A
# ref_semantics: same
# ZijunDeng/pytorch-semantic-segmentation (FCN, SegNet, PSPNet, GCN, ... for VOC / Cityscapes), models/fcn32.py (and
# fcn16.py / fcn8.py alike): the VGG variants' fully convolutional head is `conv_fc6, nn.ReLU(inplace=True),
# nn.Dropout(inplace=True), conv_fc7, nn.ReLU(inplace=True), nn.Dropout(inplace=True), score5`. Each in-place Dropout
# multiplies, in place, the output that the in-place ReLU before it returned and that ReLU's backward saved, so training
# raises "one of the variables needed for gradient computation has been modified by an inplace operation ... output 0
# of ReluBackward0". Commit 2c72b71 ("fix bugs of models (consequently using of inplace operation)") makes the Dropouts
# out of place (and, in the same commit, turns the DenseNet heads' plain ReLUs after BatchNorm into in-place ones,
# which is safe: batch norm saves its input, not its output).
# The library module is 3007helpers_fcn32.py (ref: ..._fixed.py); its header names its stand-ins.
# Stand-ins here: FCN32VGG with 3 classes on a batch of 2 random 3x16x16 images with random labels, the repository's
# CrossEntropyLoss2d, two SGD steps (lr 1e-2, momentum 0.9, as the training scripts use momentum SGD) so that the
# zero-initialised score layer lets gradients reach the head in the second step.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
fcn32 = importlib.import_module("3007helpers_fcn32")


def compute():
    torch.manual_seed(0)
    net = fcn32.FCN32VGG(num_classes=3)
    net.train()
    criterion = fcn32.CrossEntropyLoss2d()
    optimizer = torch.optim.SGD(net.parameters(), lr=1e-2, momentum=0.9)
    inputs = torch.randn(2, 3, 16, 16)
    labels = torch.randint(0, 3, (2, 16, 16))
    losses = []
    for _ in range(2):
        optimizer.zero_grad()
        outputs = net(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return {
        "losses": torch.stack(losses),
        "score5.6.weight": net.score5[6].weight.detach(),
        "score5.0.weight.grad": net.score5[0].weight.grad,
        "score5.3.weight.grad": net.score5[3].weight.grad,
        "features5.0.weight.grad": net.features5[0].weight.grad,
        "upscore5.weight.grad": net.upscore5.weight.grad,
    }


if __name__ == "__main__":
    compute()
