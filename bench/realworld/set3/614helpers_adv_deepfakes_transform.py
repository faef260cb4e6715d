# AdversarialDeepFakes dataset/transform.py (Author: Andreas Roessler), attack-related parts: Normalize / UnNormalize
# and the 'normalize' entries of the default transforms; torchvision's Compose is replaced by a minimal stand-in.


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
        for t, m, s in zip(tensor, self.mean, self.std):
            t.sub_(m).div_(s)
            # The normalize code -> t.sub_(m).div_(s)
        return tensor


xception_default_data_transforms = {
    'normalize': Compose([Normalize([0.5] * 3, [0.5] * 3)]),
    'unnormalize': Compose([UnNormalize([0.5] * 3, [0.5] * 3)]),
}

mesonet_default_data_transforms = {
    'normalize': Compose([Normalize([0.5] * 3, [0.5] * 3)]),
    'unnormalize': Compose([UnNormalize([0.5] * 3, [0.5] * 3)]),
}
