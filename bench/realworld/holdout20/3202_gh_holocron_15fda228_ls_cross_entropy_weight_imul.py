# source: https://github.com/frgfm/holocron/commit/15fda22817e33e4884491c6a23f3a7bb3d1032c1
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# Holocron (a PyTorch vision library), its losses: LabelSmoothingCrossEntropy forwards to F.ls_cross_entropy with the
# module's class weights, which ClassBalancedWrapper set from the class counts. ls_cross_entropy computes
# `logpt = F.log_softmax(x, dim=1)` and, when a weight is given, rescales it in place:
# `logpt *= weight.view(1, -1, ...)`. log_softmax saved its output for the backward, so training with class weights
# raises "one of the variables needed for gradient computation has been modified by an inplace operation"
# (LogSoftmaxBackward0) at loss.backward(). Commit 15fda228 ("fix: Fixed inplace loss weight adjustments") writes
# `logpt = logpt * weight.view(...)` there (and in multilabel_cross_entropy, focal_loss and complement_cross_entropy).
# The library modules are 3202helpers_holocron_loss.py and 3202helpers_holocron_functional.py (ref: ..._fixed.py);
# their headers name what was left out.
# Stand-ins here: a two-layer classifier on 8 features for 4 classes (any model: the loss is the culprit), class counts
# [50, 20, 10, 5], a batch of 6 with one SGD step after the backward; returned: the loss, the classifier's gradients,
# the logits' gradient, and the weights after the step.
import importlib
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
losses = importlib.import_module("3202helpers_holocron_loss")


def compute():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    num_samples = torch.tensor([50., 20., 10., 5.])
    criterion = losses.ClassBalancedWrapper(losses.LabelSmoothingCrossEntropy(eps=0.1), num_samples, beta=0.99)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    x = torch.randn(6, 8)
    target = torch.tensor([0, 1, 2, 3, 0, 2])
    optimizer.zero_grad()
    logits = model(x)
    logits.retain_grad()
    loss = criterion(logits, target)
    loss.backward()
    grads = {
        "0.weight.grad": model[0].weight.grad.clone(),
        "2.weight.grad": model[2].weight.grad.clone(),
        "2.bias.grad": model[2].bias.grad.clone(),
        "logits.grad": logits.grad.clone(),
    }
    optimizer.step()
    out = {"loss": loss.detach()}
    out.update(grads)
    out["2.weight.after_step"] = model[2].weight.detach().clone()
    return out


if __name__ == "__main__":
    compute()
