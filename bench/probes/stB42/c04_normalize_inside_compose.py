# source: own knowledge (the old torchvision-style Normalize, `t.sub_(m).div_(s)` over `zip(tensor, mean, std)`,
# used inside a Compose pipeline on the image an attack optimises: the transform is reached through the list
# Compose holds, a limit of the stB42 change, kept to show it)
import torch
import torch.nn as nn


class Compose(object):
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img


class Normalize(object):
    def __init__(self, mean, std):
        self.mean = mean
        self.std = std

    def __call__(self, tensor):
        for t, m, s in zip(tensor, self.mean, self.std):
            t.sub_(m).div_(s)
        return tensor


preprocess = Compose([Normalize([0.5] * 3, [0.5] * 3)])


def main():
    torch.manual_seed(0)
    model = nn.Conv2d(3, 2, 1)
    x = torch.rand(3, 8, 8, requires_grad=True)
    out = model(preprocess(x * 1.0).unsqueeze(0))
    out.sum().backward()
    return x.grad
