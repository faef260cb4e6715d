"""bitsandbytes 0.50.2: the two proven findings of `inplacefix check` (2bba8c4 and branch prec45,
stop 45): the CPU 8-bit blockwise optimizer update (backends/cpu/ops.py) divides by
`state1_fp32.sqrt().add_(eps)` (RMSprop line 557, Adagrad line 562): the add_ writes the result
sqrt saved for its backward. The path hands the update a gradient that requires grad (the state
then requires grad through `addcmul_(grad, grad)`), stops right after the flagged line
(`stop_after`: the rest re-quantizes the state) and calls backward from the updated weights
`p_fp32`; the control has the flagged `add_` out of place. Run from the installed file's source
(`import bitsandbytes` needs packaging and its native library), the blockwise (de)quantization of
the state stood in by the float state itself (the flagged lines come after it). bitsandbytes runs
the update in `optimizer.step()` under no_grad on gradients: real by this file's convention."""

import _shim  # noqa: F401

import importlib.util

import torch
from _check import attempt, expect_line, stop_after
from _rewrite import functions_from, rewritten

PATH = importlib.util.find_spec("bitsandbytes").submodule_search_locations[0] + "/backends/cpu/ops.py"
update = functions_from(PATH, ["_optimizer_update_8bit_blockwise_cpu"])["_optimizer_update_8bit_blockwise_cpu"]
update.__globals__.update({"torch": torch, "_dequant_blockwise_fp32_direct": lambda A, absmax, code, size: A.float(),
                           "_quant_blockwise_fp32_direct": lambda *args: None})
expect_line(update, 557, "p_fp32.addcdiv_(grad, state1_fp32.sqrt().add_(eps), value=-lr)")
expect_line(update, 562, "p_fp32.addcdiv_(grad, state1_fp32.sqrt().add_(eps), value=-lr)")


def step(function, name, line):
    def run():
        torch.manual_seed(0)
        g = torch.randn(8, requires_grad=True) * 1.0
        p = torch.randn(8)
        state1 = torch.rand(8)
        found = stop_after(function, line, lambda: function(
            name, g, p, state1, None, 0.9, 0.999, 0.0, 0.0, 1e-8, 1, 0.01, torch.zeros(256), None,
            torch.ones(1), None, 0.0, 1.0))
        found["p_fp32"].sum().backward()
    return run


OUT = "p_fp32.addcdiv_(grad, state1_fp32.sqrt().add(eps), value=-lr)"
RMS = ("        state1_fp32.mul_(beta1).addcmul_(grad, grad, value=1.0 - beta1)\n"
       "        p_fp32.addcdiv_(grad, state1_fp32.sqrt().add_(eps), value=-lr)")
ADA = ("        state1_fp32.addcmul_(grad, grad, value=1.0)\n"
       "        p_fp32.addcdiv_(grad, state1_fp32.sqrt().add_(eps), value=-lr)")
for line, name, text in ((557, "rmsprop", RMS), (562, "adagrad", ADA)):
    finding = f"bitsandbytes/backends/cpu/ops.py:{line}:IPF103"
    attempt(finding, "path", f"optimizer {name!r}, gradient requiring grad, stopped after line {line}, backward from "
            "p_fp32", step(update, name, line))
    attempt(finding, "control", f"line {line}'s add_ out of place",
            step(rewritten(update, [(text, text.replace("state1_fp32.sqrt().add_(eps)", "state1_fp32.sqrt().add(eps)"))]),
                 name, line))
