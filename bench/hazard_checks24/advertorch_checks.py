"""advertorch 0.2.3: the one proven finding of `inplacefix check` (main at 3c26737, stop 43):
`linf_clamp_` (advertorch/attacks/spsa.py:46) clamps the perturbation (`batch_clamp`, a
`torch.clamp`) and writes it in place, `dx += x_adv - x - dx`, so the optimizer keeps tracking it
(torchattacks copied it: torchattacks_checks.py). With an input `x` that requires grad, `dx`
requires grad after the first step and the next step's write breaks the clamp's save. advertorch's
package does not import with torch 2.13 (`torch.autograd.gradcheck.zero_gradients` is gone), so the
functions run from the installed files' source (`_rewrite.functions_from`): `spsa_perturb`,
`spsa_grad`, `linf_clamp_`, `_get_batch_sizes` and the helpers of `advertorch/utils.py` they call.
The path calls `spsa_perturb` with `x` requiring grad and calls backward; the control the same
with the write out of place (`dx = dx + (...)`, one line)."""

import _shim  # noqa: F401

import os
import sysconfig

import torch
from _check import attempt, expect_line
from _rewrite import functions_from

FINDING = "advertorch/attacks/spsa.py:46:IPF101"
ROOT = os.path.join(sysconfig.get_paths()["purelib"], "advertorch")
SPSA = os.path.join(ROOT, "attacks", "spsa.py")
UTILS = os.path.join(ROOT, "utils.py")


def load(edits=()):
    utils = functions_from(UTILS, ["clamp", "_batch_clamp_tensor_by_vector", "batch_clamp", "is_float_or_torch_tensor"])
    names = ["linf_clamp_", "_get_batch_sizes", "spsa_grad", "spsa_perturb"]
    spsa = functions_from(SPSA, names)
    if edits:
        with open(SPSA, encoding="utf-8") as handle:
            text = handle.read()
        for old, new in edits:
            assert text.count(old) == 1
            text = text.replace(old, new)
        import ast
        tree = ast.parse(text, SPSA)
        kept = [n for n in tree.body if isinstance(n, (ast.Import, ast.FunctionDef)) and (
            isinstance(n, ast.Import) or n.name in names)]
        spsa = {"__name__": "functions_from", "__file__": SPSA}
        exec(compile(ast.Module(body=kept, type_ignores=[]), SPSA, "exec"), spsa)
    for name in ("clamp", "batch_clamp", "is_float_or_torch_tensor", "_batch_clamp_tensor_by_vector"):
        spsa[name] = utils[name]
    return spsa


spsa = load()
expect_line(spsa["linf_clamp_"], 46, "dx += x_adv - x - dx")


def perturb(edits=()):
    def run():
        functions = load(edits)
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 4 * 4, 5))
        x = torch.rand(2, 3, 4, 4, requires_grad=True)
        loss = torch.nn.CrossEntropyLoss(reduction="none")
        out = functions["spsa_perturb"](model, loss, x * 1.0, torch.tensor([0, 1]), 0.1, 0.01, 0.01, 3, 4, 4)
        out.sum().backward()
    return run


attempt(FINDING, "path", "spsa_perturb(model, loss, x, y, eps=0.1, 3 steps), x requiring grad, backward", perturb())
attempt(FINDING, "control", "the same with `dx = dx + (x_adv - x - dx)` (out of place)",
        perturb([("dx += x_adv - x - dx", "dx = dx + (x_adv - x - dx)")]))
