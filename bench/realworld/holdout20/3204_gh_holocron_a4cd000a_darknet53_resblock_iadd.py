# source: https://github.com/frgfm/holocron/commit/a4cd000a723293e8db5a8c8302ba4ac5e4307537 (PR #70)
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# Holocron's Darknet-53 (holocron.models.darknet53): every DarkBlockV3 is a _ResBlock (holocron/models/resnet.py) whose
# main branch ends with the network's single `nn.LeakyReLU(0.1, inplace=True)` instance (DarknetBodyV3's default
# act_layer, passed to every conv_sequence). _ResBlock.forward adds the shortcut into the branch's output in place,
# `out += identity`; the in-place LeakyReLU saved that output for its backward, so a training step raises "one of the
# variables needed for gradient computation has been modified by an inplace operation" (LeakyReluBackward1).
# PR #70 ("fix: Fixed Darknet53 autograd issue") sets `self.conv[-1].inplace = False` in DarkBlockV3 (darknet.py),
# which, the module being shared, turns every activation of the network out of place.
# The library modules are 3204helpers_holocron_darknet.py (ref: ..._fixed.py) and 3204helpers_holocron_resnet.py;
# their headers name the stand-ins (a shrunken darknet53 layout).
# Stand-ins here: 10 classes, a batch of 2 RGB 16x16 images, one cross-entropy step's backward and one SGD step;
# returned: the loss, the logits, gradients of the stem, of a block's convolutions and of the classifier, and the
# classifier's weight after the step.
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
darknet = importlib.import_module("3204helpers_holocron_darknet")


def compute():
    torch.manual_seed(0)
    model = darknet.darknet53(num_classes=10)
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    x = torch.randn(2, 3, 16, 16)
    y = torch.tensor([3, 7])
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    features = model.features
    block = features[6][0]
    out = {
        "loss": loss.detach(),
        "logits": logits.detach(),
        "stem.weight.grad": features[0].weight.grad.clone(),
        "block.conv0.weight.grad": block.conv[0].weight.grad.clone(),
        "block.conv3.weight.grad": block.conv[3].weight.grad.clone(),
        "classifier.weight.grad": model.classifier.weight.grad.clone(),
    }
    optimizer.step()
    out["classifier.weight.after_step"] = model.classifier.weight.detach().clone()
    return out


if __name__ == "__main__":
    compute()
