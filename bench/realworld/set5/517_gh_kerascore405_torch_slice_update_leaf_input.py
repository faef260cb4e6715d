# source: https://github.com/keras-team/keras-core/pull/405
# pattern: subscript_assign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# keras-core torch backend ops.slice_update(inputs, start_indices, updates) (keras_core/backend/torch/core.py,
# here 517helpers_torch_core.py) wrote the update straight into its argument, `inputs[slices] = updates`; when the
# input is a tensor that requires grad (a leaf) this fails with "a leaf Variable that requires grad is being used
# in an in-place operation" ("when gradients are needed for the input/output tensors"). The merged PR copies
# first: outputs = torch.clone(inputs); outputs[slices] = updates (517helpers_torch_core_fixed.py), so gradients
# reach both the input and the update.
# Harness: a sequence input that requires grad (as when taking gradients w.r.t. inputs) gets a learned prefix
# written over its first steps with ops.slice_update, followed by a small dense head.
import importlib.util
import os

import torch
import torch.nn as nn


def _load(name):
    spec = importlib.util.spec_from_file_location(
        "core", os.path.join(os.path.dirname(os.path.abspath(__file__)), name))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


ops = _load("517helpers_torch_core.py")


def compute():
    torch.manual_seed(0)
    x = torch.randn(2, 6, 4, requires_grad=True)
    prefix = nn.Parameter(torch.randn(2, 2, 4))
    head = nn.Linear(4, 1)
    y = ops.slice_update(x, [0, 0, 0], prefix)
    loss = head(torch.tanh(y)).pow(2).mean()
    loss.backward()
    return {"x.grad": x.grad.clone(), "prefix.grad": prefix.grad.clone(),
            "head.weight.grad": head.weight.grad.clone(), "head.bias.grad": head.bias.grad.clone()}


if __name__ == "__main__":
    compute()
