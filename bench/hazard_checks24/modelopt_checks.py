"""nvidia-modelopt 0.47.0 (torch/quantization/qtensor/base_qtensor.py:189, `custom_load_from_state_dict`, the
`_load_from_state_dict` override that `dynamically_update_state_methods` installs on quantized linear layers):
the proven finding of `inplacefix check` on main f57423a (stop 52, fresh52b). `param.copy_(state_dict[...])`
runs only for parameters with `isinstance(param, QTensorWrapper)`, and `QTensorWrapper.__new__` makes every
instance with `super().__new__(cls, ..., requires_grad=False)`: the copy is into a leaf that does not require
grad. `QTensorWrapper` and `dynamically_update_state_methods` are compiled alone from the shipped file (modelopt's
package imports are not met here); `BaseQuantizedTensor` is a stand-in class. `load_state_dict` with grad on
runs: false. Context: the same wrapper with requires_grad turned on by hand raises the leaf error."""

import _shim  # noqa: F401
import linecache

import torch
import torch.nn as nn
from _check import attempt
from _fresh52b import compile_alone, src

SRC = src("modelopt/torch/quantization/qtensor/base_qtensor.py")
assert linecache.getline(SRC, 189).strip() == "param.copy_(state_dict[prefix + name])"


def run(force_grad=False):
    def go():
        ns = compile_alone(SRC, {"QTensorWrapper", "dynamically_update_state_methods"},
                           {"torch": torch, "BaseQuantizedTensor": type("BaseQuantizedTensor", (), {})})
        meta = {"qtensor_class": object, "shape": torch.Size([2, 4]), "dtype": torch.float32}
        lin = nn.Linear(4, 2)
        lin.weight = ns["QTensorWrapper"](torch.zeros(2, 4, dtype=torch.uint8), metadata=meta)
        if force_grad:  # not something modelopt does: uint8 cannot require grad, so use float data
            lin.weight = ns["QTensorWrapper"](torch.zeros(2, 4), metadata=meta)
            lin.weight.requires_grad_(True)
        ns["dynamically_update_state_methods"](lin)
        sd = {"weight": lin.weight.detach().clone() + 1, "bias": torch.ones(2)}
        lin.load_state_dict(sd)
        assert torch.equal(lin.weight.detach(), sd["weight"])
    return go


F189 = "modelopt/torch/quantization/qtensor/base_qtensor.py:189:IPF105"
attempt(F189, "path", "a linear layer with a QTensorWrapper weight, load_state_dict with grad on (the path the finding "
        "describes): the copy_ into the wrapper runs", run())
attempt(F189, "context", "the wrapper's requires_grad turned on by hand (float data): the leaf error", run(True))
