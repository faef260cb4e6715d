# source: own knowledge (the UnNormalize transform of torchvision's old Normalize, `for t, m, s in zip(tensor,
# mean, std): t.mul_(s).add_(m)`, copied into adversarial-attack code and applied to the image being attacked)
import torch
import torch.nn as nn


class UnNormalize(object):
    def __init__(self, mean, std):
        self.mean = mean
        self.std = std

    def __call__(self, tensor):
        for t, m, s in zip(tensor, self.mean, self.std):
            t.mul_(s).add_(m)
        return tensor


def main():
    torch.manual_seed(0)
    model = nn.Conv2d(3, 2, 1)
    image = torch.rand(3, 8, 8)
    x_adv = image.clone().detach().requires_grad_(True)
    unnorm = UnNormalize([0.5] * 3, [0.5] * 3)
    out = model(unnorm(x_adv).unsqueeze(0))
    out.sum().backward()
    return x_adv.grad
