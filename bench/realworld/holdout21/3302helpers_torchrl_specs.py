# torchrl/data/tensor_specs.py at 2f8c118e3^ (pytorch/rl, Feb 2025), reduced to what a continuous safe actor uses:
# Bounded (low / high box, is_in, project -> _project as in the source, with its maximum/minimum path and the
# in-place fallback) and Composite (a key -> spec mapping). Shape / dtype / device bookkeeping is left out
# (the source's is_in checks shapes and dtype first; here the actor's shapes and dtype always match).
import torch


class _Box:
    def __init__(self, low, high):
        self.low = low
        self.high = high


class TensorSpec:
    def project(self, val):
        if not self.is_in(val):
            return self._project(val)
        return val


class Bounded(TensorSpec):
    def __init__(self, low, high, shape, dtype=torch.float32):
        low = torch.as_tensor(low, dtype=dtype).expand(shape).clone()
        high = torch.as_tensor(high, dtype=dtype).expand(shape).clone()
        self.space = _Box(low, high)
        self.shape = torch.Size(shape)
        self.dtype = dtype
        self.device = low.device

    def clone(self):
        return Bounded(self.space.low.clone(), self.space.high.clone(), self.shape, self.dtype)

    def _project(self, val: torch.Tensor) -> torch.Tensor:
        low = self.space.low
        high = self.space.high
        if self.device != val.device:
            low = low.to(val.device)
            high = high.to(val.device)
        try:
            val = torch.maximum(torch.minimum(val, high), low)
        except ValueError:
            low = low.expand_as(val)
            high = high.expand_as(val)
            val[val < low] = low[val < low]
            val[val > high] = high[val > high]
        except RuntimeError:
            low = low.expand_as(val)
            high = high.expand_as(val)
            val[val < low] = low[val < low]
            val[val > high] = high[val > high]
        return val

    def is_in(self, val: torch.Tensor) -> bool:
        try:
            within_bounds = (val >= self.space.low.to(val.device)).all() and (
                val <= self.space.high.to(val.device)
            ).all()
            return within_bounds
        except RuntimeError:
            return False


class Composite(TensorSpec):
    def __init__(self, specs=None):
        self._specs = dict(specs or {})

    def keys(self, include_nested=False, leaves_only=False):
        return self._specs.keys()

    def values(self):
        return self._specs.values()

    def __getitem__(self, key):
        return self._specs[key]

    def __setitem__(self, key, value):
        self._specs[key] = value
