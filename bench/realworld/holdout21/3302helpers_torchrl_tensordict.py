# Stand-in for the parts of tensordict (pytorch/tensordict, not installed here) that torchrl's safe modules use:
# a TensorDict with get / set / set_ and a batch size, and TensorDictModule (reads in_keys, writes out_keys).
# Written anew after tensordict's semantics: `set` binds the key to the given tensor; `set_` writes the value into
# the tensor already stored under the key, in place (tensordict's `_set_str(..., inplace=True)` ends in
# `dest.copy_(value)`).
import torch
from torch import nn


class TensorDict:
    def __init__(self, source=None, batch_size=()):
        self._tensordict = dict(source or {})
        self.batch_size = torch.Size(batch_size)

    def get(self, key, *default):
        if key in self._tensordict:
            return self._tensordict[key]
        if default:
            return default[0]
        raise KeyError(key)

    def __getitem__(self, key):
        return self.get(key)

    def set(self, key, value):
        self._tensordict[key] = value
        return self

    def set_(self, key, value):
        dest = self._tensordict[key]
        dest.copy_(value)
        return self

    def keys(self):
        return self._tensordict.keys()


class TensorDictModule(nn.Module):
    def __init__(self, module, in_keys, out_keys):
        super().__init__()
        self.module = module
        self.in_keys = list(in_keys)
        self.out_keys = list(out_keys)

    def forward(self, tensordict):
        outputs = self.module(*(tensordict.get(k) for k in self.in_keys))
        if not isinstance(outputs, tuple):
            outputs = (outputs,)
        for key, value in zip(self.out_keys, outputs):
            tensordict.set(key, value)
        return tensordict


class TensorDictSequential(nn.Module):
    def __init__(self, *modules):
        super().__init__()
        self.module = nn.ModuleList(modules)

    def forward(self, tensordict):
        for module in self.module:
            tensordict = module(tensordict)
        return tensordict
