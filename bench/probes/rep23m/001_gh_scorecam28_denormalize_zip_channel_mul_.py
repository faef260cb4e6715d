# source: https://github.com/haofanwang/Score-CAM/issues/28
# pattern: unbind_loop_inplace
# codemod_fixable: yes
# error: C
# ref_semantics: same
# Score-CAM, utils/__init__.py: basic_visualize(input_, ...) calls denormalize(input_), which clones the image and
# walks its channels with `for channel, mean, std in zip(denormalized[0], means, stds): channel.mul_(std).add_(mean)`.
# Iterating a tensor unbinds it, so on an input that requires grad (here: an image optimised for a saliency map)
# the write fails with "Output 0 of UnbindBackward0 is a view and is being modified inplace". Thread fix (comment
# by hayleeXinyi): index the channel and assign out of place, `denormalized[0][count] = denormalized[0][count].mul(std)`
# then `.add(mean)`. Stand-ins: a 3x8x8 image, a 1x1 conv as the model, the loss on the denormalised overlay.
import torch
import torch.nn as nn


def denormalize(tensor):
    means = [0.485, 0.456, 0.406]
    stds = [0.229, 0.224, 0.225]
    denormalized = tensor.clone()
    for channel, mean, std in zip(denormalized[0], means, stds):
        channel.mul_(std).add_(mean)
    return denormalized


def compute():
    torch.manual_seed(0)
    model = nn.Conv2d(3, 1, 1)
    image = torch.randn(1, 3, 8, 8, requires_grad=True)
    saliency = torch.sigmoid(model(image))
    overlay = denormalize(image) * saliency
    overlay.pow(2).mean().backward()
    return {"image": image.grad, "weight": model.weight.grad, "bias": model.bias.grad}


if __name__ == "__main__":
    compute()
