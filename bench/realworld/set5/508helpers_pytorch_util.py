# helper for 508: the two functions of rlkit/torch/pytorch_util.py that SACTrainer uses (CPU only).
import torch


def soft_update_from_to(source, target, tau):
    for target_param, param in zip(target.parameters(), source.parameters()):
        target_param.data.copy_(
            target_param.data * (1.0 - tau) + param.data * tau
        )


def zeros(*sizes, **kwargs):
    return torch.zeros(*sizes, **kwargs)
