# source: https://github.com/Trusted-AI/adversarial-robustness-toolbox/commit/2e31c323989688dadd5f3e91ff3123c691c5e7ba
# pattern: inplace_method
# codemod_fixable: yes
# error: B
# ref_semantics: same
# Adversarial Robustness Toolbox, Over-the-Air Flickering attack on video classifiers (OverTheAirFlickeringTorch
# .generate): the perturbation is built as
# `Parameter(torch.zeros(T, 3, 1, 1, requires_grad=True).normal_(mean=0.0, std=0.2).to(device), requires_grad=True)`;
# `torch.zeros(..., requires_grad=True)` is a leaf that requires grad, so its in-place random init `.normal_()` fails
# with "a leaf Variable that requires grad is being used in an in-place operation". The flag had come in with the
# commit before (265f1bd "Removed early clamping", which also said "This caused leaf variable errors"); commit
# 2e31c32 ("Removed a requires grad / Leaf variable issues") drops `requires_grad=True` from `torch.zeros` and keeps
# it on the Parameter.
# The library module is 2707helpers_art_over_the_air_flickering.py (ref: ..._fixed.py); its header names its
# stand-ins (one epoch instead of 200, label formatting, expit, the numpy conversions).
# Stand-ins here: a small video classifier (mean-pooled frames into a linear layer over 4 classes, called as
# `model(video, return_loss=False)` like the MMAction-style recognisers the attack targets) exposing `.model`,
# `.device` and `.nb_classes`; two random videos of 3 frames, 3 channels, 4x4 pixels (the branch's delta has shape
# (x[0].shape[1], 3, 1, 1), so frames and channels must agree); labels as class indices of shape (2, 1); the paper's
# hyperparameters lambda 1.0, beta_1 0.5, beta_2 0.5, margin 0.05.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
flicker = importlib.import_module("2707helpers_art_over_the_air_flickering")


class VideoRecognizer(torch.nn.Module):
    def __init__(self, channels=3, n_classes=4):
        super().__init__()
        self.cls_head = torch.nn.Linear(channels, n_classes)

    def forward(self, video, return_loss=False):
        return self.cls_head(video.mean(dim=(0, 2, 3))).unsqueeze(0)


class Estimator:
    def __init__(self):
        self.model = VideoRecognizer()
        self.device = torch.device("cpu")
        self.nb_classes = 4


def compute():
    torch.manual_seed(0)
    estimator = Estimator()
    attack = flicker.OverTheAirFlickeringTorch(estimator, regularization_param=1.0, beta_1=0.5, beta_2=0.5,
                                               margin=0.05)
    x = torch.rand(2, 3, 3, 4, 4)
    y = torch.tensor([[1], [3]])
    x_adv = attack.generate(x, y)
    return {"x_adv": x_adv}


if __name__ == "__main__":
    compute()
