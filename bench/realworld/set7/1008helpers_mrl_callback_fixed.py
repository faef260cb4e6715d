# Reduced copy of mrl/torch_core.py (get_device, to_device) and mrl/train/callback.py (SettrDict, BatchState) of
# DarkMatterAI/mrl (molecular reinforcement learning, version 1.3) with commit 14d60cb applied for case 1008. The `use_cuda`
# environment switch is reduced to torch.cuda.is_available() (the reduction runs on the CPU, as the report did).
import torch


def get_device():
    if torch.cuda.is_available():
        device = torch.cuda.current_device()
    else:
        device = 'cpu'
    device = torch.device(device)
    return device


def to_device(tensor, device=None):
    if device is None:
        device = get_device()
    else:
        device = torch.device(device)

    if hasattr(tensor, 'to'):
        output = tensor.to(device)
    else:
        output = [to_device(i, device) for i in tensor]

    return output


class SettrDict(dict):
    def __init__(self):
        super().__init__()

    def __setitem__(self, key, item):
        super().__setitem__(key, item)
        super().__setattr__(key, item)

    def __setattr__(self, key, item):
        super().__setitem__(key, item)
        super().__setattr__(key, item)

    def update_from_dict(self, update_dict):
        for k, v in update_dict.items():
            self[k] = v


class BatchState(SettrDict):
    def __init__(self):
        super().__init__()

        self.samples = []
        self.sources = []
        self.rewards = to_device(torch.tensor(0.))
        self.loss = torch.tensor(0., requires_grad=True)
        self.loss = to_device(self.loss.clone())
        self.latent_data = {}
