# source: own knowledge (saliency / Grad-CAM visualisation scripts: a module-level `deprocess = Denormalize(...)`
# transform applied to the input image whose gradient is taken, before showing it)
import torch
import torch.nn as nn

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


class Denormalize:
    def __init__(self, mean, std):
        self.mean = mean
        self.std = std

    def __call__(self, img: torch.Tensor) -> torch.Tensor:
        for channel, m, s in zip(img, self.mean, self.std):
            channel.mul_(s).add_(m)
        return img


deprocess = Denormalize(MEAN, STD)


def saliency(model, image):
    x = image.unsqueeze(0).requires_grad_()
    score = model(x)[0, 1]
    score.backward()
    shown = deprocess(x[0] * 1.0)
    return x.grad.abs().amax(1), shown


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 3))
    return saliency(model, torch.rand(3, 8, 8))
