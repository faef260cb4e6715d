# torchrl/modules/tensordict_module/{common,probabilistic}.py at 2f8c118e3^ (pytorch/rl, Feb 2025), reduced:
# _forward_hook_safe_action as in the source (the spec projection written back with `tensordict_out.set_`) and
# SafeProbabilisticModule (spec wrapped in a Composite, the hook registered when safe=True). Stand-ins: the
# parent class tensordict.nn.ProbabilisticTensorDictModule is reduced to its forward (build the distribution from
# in_keys, rsample under the RANDOM interaction type that collectors and training set, mean otherwise);
# interaction_type() is a module-level setting; the vmap branch of the hook's error handler is kept.
import importlib
import os
import re
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
_specs = importlib.import_module("3302helpers_torchrl_specs")
Composite = _specs.Composite
TensorSpec = _specs.TensorSpec

_INTERACTION_TYPE = ["random"]


def set_interaction_type(kind):
    _INTERACTION_TYPE[0] = kind


def _forward_hook_safe_action(module, tensordict_in, tensordict_out):
    try:
        spec = module.spec
        if len(module.out_keys) > 1 and not isinstance(spec, Composite):
            raise RuntimeError(
                "safe TensorDictModules with multiple out_keys require a Composite with matching keys. Got "
                f"keys {module.out_keys}."
            )
        elif not isinstance(spec, Composite):
            out_key = module.out_keys[0]
            keys = [out_key]
            values = [spec]
        else:
            # Make dynamo happy with the list creation
            keys = [key for key in spec.keys(True, True)]  # noqa: C416
            values = [spec[key] for key in keys]
        for _spec, _key in zip(values, keys):
            if _spec is None:
                continue
            item = tensordict_out.get(_key, None)
            if item is None:
                # this will happen when an exploration (e.g. OU) writes a key only
                # during exploration, but is missing otherwise.
                # it's fine since what we want here it to make sure that a key
                # is within bounds if it is present
                continue
            if not _spec.is_in(item):
                try:
                    tensordict_out.set_(
                        _key,
                        _spec.project(tensordict_out.get(_key)),
                    )
                except RuntimeError:
                    tensordict_out.set(
                        _key,
                        _spec.project(tensordict_out.get(_key)),
                    )
    except RuntimeError as err:
        if re.search(
            "attempting to use a Tensor in some data-dependent control flow", str(err)
        ):
            raise RuntimeError(
                "vmap cannot be used with safe=True, consider turning the safe mode off."
            ) from err
        else:
            raise err


class ProbabilisticTensorDictModule(nn.Module):
    def __init__(self, in_keys, out_keys, distribution_class, distribution_kwargs=None):
        super().__init__()
        self.in_keys = list(in_keys)
        self.out_keys = list(out_keys)
        self._out_keys = list(out_keys)
        self.distribution_class = distribution_class
        self.distribution_kwargs = distribution_kwargs or {}

    def get_dist(self, tensordict):
        kwargs = {key: tensordict.get(key) for key in self.in_keys}
        return self.distribution_class(**kwargs, **self.distribution_kwargs)

    def forward(self, tensordict):
        dist = self.get_dist(tensordict)
        if _INTERACTION_TYPE[0] == "random":
            out = dist.rsample() if dist.has_rsample else dist.sample()
        else:
            out = dist.mean
        tensordict.set(self.out_keys[0], out)
        return tensordict


class SafeProbabilisticModule(ProbabilisticTensorDictModule):
    def __init__(self, in_keys, out_keys=None, spec=None, safe=False, distribution_class=None,
                 distribution_kwargs=None):
        super().__init__(in_keys=in_keys, out_keys=out_keys, distribution_class=distribution_class,
                         distribution_kwargs=distribution_kwargs)
        if spec is not None:
            spec = spec.clone()
        if spec is not None and not isinstance(spec, TensorSpec):
            raise TypeError("spec must be a TensorSpec subclass")
        elif spec is not None and not isinstance(spec, Composite):
            if len(self.out_keys) > 1:
                raise RuntimeError(
                    f"got more than one out_key for the SafeModule: {self.out_keys},\nbut only one spec. "
                    "Consider using a Composite object or no spec at all."
                )
            spec = Composite({self.out_keys[0]: spec})
        elif spec is None:
            spec = Composite()
        self._spec = spec
        self.safe = safe
        if safe:
            if spec is None or (
                isinstance(spec, Composite)
                and all(_spec is None for _spec in spec.values())
            ):
                raise RuntimeError(
                    "`SafeProbabilisticModule(spec=None, safe=True)` is not a valid configuration as the tensor "
                    "specs are not specified"
                )
            self.register_forward_hook(_forward_hook_safe_action)

    @property
    def spec(self):
        return self._spec
