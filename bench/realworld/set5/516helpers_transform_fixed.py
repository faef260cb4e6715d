# helper for 516 (fixed copy, used by the .ref.py; Normalize writes out of place into a clone): dataset/transform.py of paarthneekhara/AdversarialDeepFakes (attack-time Normalize/UnNormalize;
# torchvision.transforms.Compose replaced by a minimal stand-in, the PIL-based train/val/test pipelines dropped).


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
        """
        Args:
            tensor (Tensor): Tensor image of size (C, H, W) to be normalized.
        Returns:
            Tensor: Normalized image.
        """
        out = tensor.clone()
        for i, (t, m, s) in enumerate(zip(tensor, self.mean, self.std)):
            out[i] = (t - m) / s
        return out


mesonet_default_data_transforms = {
    'normalize': Compose([
        Normalize([0.5] * 3, [0.5] * 3)
    ]),
    'unnormalize': Compose([
        UnNormalize([0.5] * 3, [0.5] * 3)
    ])
}
