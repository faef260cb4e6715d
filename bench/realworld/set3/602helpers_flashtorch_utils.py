# flashtorch.utils (flashtorch 0.1.x, flashtorch/utils/__init__.py), trimmed: the PIL/torchvision transforms of
# apply_transforms() are replaced by a torch-only normalisation of a [C, H, W] tensor in [0, 1].
import torch


def apply_transforms(image, size=224):
    """Transforms an image to a normalised (1, C, H, W) tensor that requires grad."""
    means = [0.485, 0.456, 0.406]
    stds = [0.229, 0.224, 0.225]

    tensor = ((image - torch.tensor(means).view(3, 1, 1)) / torch.tensor(stds).view(3, 1, 1)).unsqueeze(0)

    tensor.requires_grad = True

    return tensor


def denormalize(tensor):
    """Reverses the normalisation on a tensor (image * std + mean)."""
    means = [0.485, 0.456, 0.406]
    stds = [0.229, 0.224, 0.225]

    denormalized = tensor.clone()

    for channel, mean, std in zip(denormalized[0], means, stds):
        channel.mul_(std).add_(mean)

    return denormalized


def standardize_and_clip(tensor, min_value=0.0, max_value=1.0, saturation=0.1, brightness=0.5):
    tensor = tensor.detach().cpu()

    mean = tensor.mean()
    std = tensor.std()

    if std == 0:
        std += 1e-7

    standardized = tensor.sub(mean).div(std).mul(saturation)
    clipped = standardized.add(brightness).clamp(min_value, max_value)

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
