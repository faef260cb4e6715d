"""mmrazor 1.0.0 (mmrazor/models/fake_quants/lsq.py:290 `LearnableFakeQuantize._load_from_state_dict`): the proven
finding of `inplacefix check` (stop 58, fresh58, end of stop). `self.scale.copy_(val)` writes the learnable scale, an
nn.Parameter with grad on, but it sits under `if torch.jit.is_scripting():` (:288), which is False whenever Python
runs the method (the method is a loading hook that TorchScript never compiles; the comment and code are copied from
PyTorch's fake_quantize.py). Loading a state dict with grad on runs (the parent's loading copies under no_grad). So no
use raises at :290. False (scripting-arm-leaf: fresh58_probes.py; the check already reads `is_scripting()` as False
for returns, not for this leaf write). The context makes is_scripting() answer True (not as shipped): then the copy_
raises the leaf error. The method is compiled alone from the shipped file into a stand-in module with the two
Parameters LearnableFakeQuantize makes (scale, zero_point)."""

import _shim  # noqa: F401
import linecache
from unittest import mock

import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("mmrazor/models/fake_quants/lsq.py")
assert linecache.getline(PATH, 288).strip() == "if torch.jit.is_scripting():"
assert linecache.getline(PATH, 290).strip() == "self.scale.copy_(val)"


def run(scripting=False):
    ns = {"torch": torch}

    class LearnableFakeQuantize(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = torch.nn.Parameter(torch.tensor([1.0]))
            self.zero_point = torch.nn.Parameter(torch.tensor([0.0]))

    ns["LearnableFakeQuantize"] = LearnableFakeQuantize
    compile_alone(PATH, {"LearnableFakeQuantize._load_from_state_dict"}, ns)
    LearnableFakeQuantize._load_from_state_dict = ns["_load_from_state_dict"]

    def go():
        m = LearnableFakeQuantize()
        with mock.patch.object(torch.jit, "is_scripting", lambda: scripting):
            m.load_state_dict({"scale": torch.tensor([0.5]), "zero_point": torch.tensor([2.0])})
        loss = (m.scale * 3 + m.zero_point).sum()
        loss.backward()
        assert m.scale.grad is not None
    return go


FID = "mmrazor/models/fake_quants/lsq.py:290:IPF105"
attempt(FID, "path", "load_state_dict({scale, zero_point}) on the module with grad on, as Python runs it "
        "(is_scripting() False): the copy under the scripting test does not run; loading and backward run", run())
attempt(FID, "context", "is_scripting() made to answer True (not as shipped): copy_ into the Parameter raises the "
        "leaf error", run(scripting=True))
