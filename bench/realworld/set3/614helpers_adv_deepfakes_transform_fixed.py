# 614helpers_adv_deepfakes_transform.py with the fix of a fork of AdversarialDeepFakes: Normalize computes
# `tensor = (tensor-self.mean)/self.std` out of place with mean/std given as (1, 3, H, W) tensors of 0.5.
import torch


class Compose(object):
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img


class UnNormalize(object):
    def __init__(self, mean, std):
        self.mean = mean
        self.std = std

    def __call__(self, tensor):
        for t, m, s in zip(tensor, self.mean, self.std):
            t.mul_(s).add_(m)
            # The normalize code -> t.sub_(m).div_(s)
        return tensor


class Normalize(object):
    def __init__(self, mean, std):
        self.mean = mean
        self.std = std

    def __call__(self, tensor):
        tensor = (tensor-self.mean)/self.std
        return tensor


xception_default_data_transforms = {
    'normalize': Compose([Normalize([0.5] * 3, [0.5] * 3)]),
    'unnormalize': Compose([UnNormalize([0.5] * 3, [0.5] * 3)]),
}

mean = torch.ones(1, 3, 256, 256)*0.5
std = torch.ones(1, 3, 256, 256)*0.5

mesonet_default_data_transforms = {
    'normalize': Compose([Normalize(mean, std)]),
    'unnormalize': Compose([UnNormalize([0.5] * 3, [0.5] * 3)]),
}
