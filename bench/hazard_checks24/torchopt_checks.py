"""torchopt 0.7.3: the one proven finding of `inplacefix check` (2bba8c4 and branch prec45, stop 45):
the Python fallback of the fused Adam update, `forward_` (accelerated_op/_src/adam_op.py), runs
`nu = nu.mul_(b2).addcmul_(updates, updates, ...)` (line 36: addcmul saves `updates` for the
gradient of its other factor) and then `updates.copy_(...)` (line 37). The path hands it updates
that require grad and calls backward from `nu`; the control is the same with line 37 writing a
fresh tensor (`updates = torch.empty_like(updates).copy_(...)`, the line count kept). torchopt's
optimizers call it on gradients under no_grad (`torchopt.accelerated_op`): real by this file's
convention. Run from the installed file's source (`import torchopt` needs optree)."""

import _shim  # noqa: F401

import importlib.util

import torch
from _check import attempt, expect_line
from _rewrite import functions_from, rewritten

FINDING = "torchopt/accelerated_op/_src/adam_op.py:37:IPF103"
PATH = importlib.util.find_spec("torchopt").submodule_search_locations[0] + "/accelerated_op/_src/adam_op.py"
forward_ = functions_from(PATH, ["forward_"])["forward_"]
forward_.__globals__["torch"] = torch
expect_line(forward_, 36, "nu = nu.mul_(b2).addcmul_(updates, updates, value=1.0 - b2)")
expect_line(forward_, 37, "updates.copy_(")


def adam(function):
    def run():
        torch.manual_seed(0)
        updates = torch.randn(5, requires_grad=True) * 1.0
        mu, nu = torch.zeros(5), torch.zeros(5)
        _, mu, nu = function(updates, mu, nu, 0.9, 0.999, 1e-8, 0.0, 1)
        nu.sum().backward()
    return run


attempt(FINDING, "path", "forward_(updates requiring grad, zero moments, count 1), backward from nu", adam(forward_))
attempt(FINDING, "control", "line 37 writes a fresh tensor instead of updates",
        adam(rewritten(forward_, [("    updates.copy_(", "    updates = torch.empty_like(updates).copy_(")])))
