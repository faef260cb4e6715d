# helper for 511 (fixed copy, used by the .ref.py): the image helpers of haofanwang/Score-CAM utils/__init__.py (denormalize as in the repo;
# apply_transforms without PIL/torchvision: normalizes a CHW float tensor and marks it requires_grad like the repo).
import torch


def apply_transforms(image, size=224):
    means = [0.485, 0.456, 0.406]
    stds = [0.229, 0.224, 0.225]
    tensor = (image - torch.tensor(means).view(3, 1, 1)) / torch.tensor(stds).view(3, 1, 1)
    tensor = tensor.unsqueeze(0)
    tensor.requires_grad = True
    return tensor


def denormalize(tensor):
    """Reverses the normalisation on a tensor.

    Normalisation: (image - mean) / std
    Denormalisation: image * std + mean
    """

    means = [0.485, 0.456, 0.406]
    stds = [0.229, 0.224, 0.225]

    denormalized = tensor.clone()

    count = 0
    for channel, mean, std in zip(denormalized[0], means, stds):
        denormalized[0][count] = denormalized[0][count].mul(std)
        denormalized[0][count] = denormalized[0][count].add(mean)
        count += 1

    return denormalized


def standardize_and_clip(tensor, min_value=0.0, max_value=1.0):
    mean = tensor.mean()
    std = tensor.std()
    if std == 0:
        std += 1e-7
    standardized = tensor.sub(mean).div(std).mul(0.1)
    clipped = standardized.add(0.5).clamp(min_value, max_value)
    return clipped


def format_for_plotting(tensor):
    has_batch_dimension = len(tensor.shape) == 4
    formatted = tensor.clone()

    if has_batch_dimension:
        formatted = tensor.squeeze(0)

    if formatted.shape[0] == 1:
        return formatted.squeeze(0).detach()
    else:
        return formatted.permute(1, 2, 0).detach()


def basic_visualize(input_, gradients, save_path=None, weight=None, cmap='viridis', alpha=0.7):
    """plotting dropped: returns the two images that would be drawn"""
    input_ = format_for_plotting(denormalize(input_))
    gradients = format_for_plotting(standardize_and_clip(gradients))
    return input_, gradients
