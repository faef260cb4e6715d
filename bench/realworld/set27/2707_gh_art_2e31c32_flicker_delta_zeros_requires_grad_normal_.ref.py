# reference fix for 2707: commit 2e31c32 in the library module (2707helpers_art_over_the_air_flickering_fixed.py):
# `torch.zeros(T, 3, 1, 1).normal_(...)` without requires_grad, the Parameter keeps requires_grad=True.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
flicker = importlib.import_module("2707helpers_art_over_the_air_flickering_fixed")


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
