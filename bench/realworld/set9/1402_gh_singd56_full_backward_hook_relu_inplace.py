# source: https://github.com/f-dangel/singd/issues/56
# pattern: inplace_kwarg
# codemod_fixable: yes
# error: C
# ref_semantics: same
# singd (second-order optimizer, structured KFAC): SINGD installs a full backward hook on every Conv2d / Linear layer
# to accumulate its Kronecker factors; `register_full_backward_hook` routes the layer's output through
# BackwardHookFunction, which returns it as-is, so the next layer of the model, `ReLU(inplace=True)`, modifies
# a view created inside a custom Function: "Output 0 of BackwardHookFunctionBackward is a view and is being modified
# inplace. This view was created inside a custom Function (or because an input was returned as-is) ..." at
# `output = model(X)` (issue #56, "Full backward hook incompatible with in-place activations", with
# `TRIGGER_BUG = True`). Fix (PR #63, merged, closing the issue): a forward hook that registers a tensor hook on the
# layer's output (the workaround of pytorch#61519), so in-place activations keep working.
# The library module is 1402helpers_singd_optimizer.py (ref: 1402helpers_singd_optimizer_fixed.py).
# Stand-ins: see the helper's header (the hook machinery is SINGD's; the update step is dropped); the model
# `Sequential(Conv2d(1, 1, 3), ReLU(inplace=TRIGGER_BUG))` with two output channels and a Linear head added so that
# a loss can be taken; one backward pass.
import importlib
import os
import sys

import torch
from torch.nn import Conv2d, Flatten, Linear, ReLU, Sequential

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
singd_optimizer = importlib.import_module("1402helpers_singd_optimizer")

TRIGGER_BUG = True


def compute():
    torch.manual_seed(0)
    model = Sequential(
        Conv2d(1, 2, 3),
        ReLU(inplace=TRIGGER_BUG),
        Flatten(),
        Linear(18, 3),
    )
    optim = singd_optimizer.SINGDStandIn(model)  # install hooks

    batch_size = 2
    X = torch.rand(batch_size, 1, 5, 5)
    y = torch.randint(0, 3, (batch_size,))

    output = model(X)
    loss = torch.nn.functional.cross_entropy(output, y)
    loss.backward()
    out = {name: p.grad.clone() for name, p in model.named_parameters()}
    for name in optim.H_Ks:
        out[f"H_K.{name}"] = optim.H_Ks[name]
        out[f"H_C.{name}"] = optim.H_Cs[name]
    return out


if __name__ == "__main__":
    compute()
