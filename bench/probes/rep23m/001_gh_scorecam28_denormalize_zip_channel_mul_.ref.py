# reference: the thread's fix (index the channel, assign out of place)
import torch
import torch.nn as nn


def denormalize(tensor):
    means = [0.485, 0.456, 0.406]
    stds = [0.229, 0.224, 0.225]
    denormalized = tensor.clone()
    count = 0
    for channel, mean, std in zip(denormalized[0], means, stds):
        denormalized[0][count] = denormalized[0][count].mul(std)
        denormalized[0][count] = denormalized[0][count].add(mean)
        count += 1
    return denormalized


def compute():
    torch.manual_seed(0)
    model = nn.Conv2d(3, 1, 1)
    image = torch.randn(1, 3, 8, 8, requires_grad=True)
    saliency = torch.sigmoid(model(image))
    overlay = denormalize(image) * saliency
    overlay.pow(2).mean().backward()
    return {"image": image.grad, "weight": model.weight.grad, "bias": model.bias.grad}
