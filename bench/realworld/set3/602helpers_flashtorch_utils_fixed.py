# flashtorch.utils with the fix used downstream for newer PyTorch (a fork marked "compatible the higher version
# of pytorch"): denormalize() computes each channel out of place and writes it into the clone; otherwise identical.
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
    denormalized_tmp = tensor.clone()
    for indx, value in enumerate(zip(denormalized_tmp[0], means, stds)):
        mean = value[1]
        std = value[2]
        channel = value[0]
        channel = torch.mul(channel, std)
        channel = torch.add(channel, mean)
        denormalized[0][indx] = channel

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
