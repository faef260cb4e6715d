"""lightning-uq-box 0.2.0: the two proven findings of `inplacefix check` on main e3574f0 (stop 49,
prec49): `Img2ImgConformal.adjust_model_logits` (uq_methods/img2img_conformal.py) writes
`output[:, 0, :, :] = torch.minimum(output[:, 0, :, :], output[:, 1, :, :] - 1e-6)` (line 134) and
`output[:, 2, :, :] = torch.maximum(output[:, 2, :, :], output[:, 1, :, :] + 1e-6)` (line 137):
minimum/maximum save both operands, and the first is a view of `output`, written by the assignment.
The module imports lightning and scipy at the top (not installed here), so the driver compiles the
method alone from the installed file (ast, line numbers kept) in a namespace holding torch; it uses
only `self.lam`. The path calls it with model outputs [B, 3, H, W] requiring grad and runs backward
(line 134 raises first); for line 137 alone, line 134 made out of place (a fresh `torch.cat`, same line
count) and backward still raises through maximum's saved view; the control both out of place (runs);
the context what the class does: `forward` computes the model's output under `torch.no_grad()` and
`get_rcps_losses_from_outputs` runs under `@torch.no_grad()`, so nothing requires grad (runs).
Real by this file's convention (an input requiring grad raises); the library's own use runs."""

import _shim  # noqa: F401
import ast
import importlib.util
import os
import types

import torch
from _check import attempt, expect_line
from _rewrite import rewritten

PATH = os.path.join(os.path.dirname(importlib.util.find_spec("lightning_uq_box").origin),
                    "uq_methods", "img2img_conformal.py")


def method():
    tree = ast.parse(open(PATH).read(), PATH)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Img2ImgConformal")
    fn = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "adjust_model_logits")
    namespace = {"torch": torch, "Tensor": torch.Tensor}
    exec(compile(ast.Module(body=[fn], type_ignores=[]), PATH, "exec"), namespace)
    return namespace["adjust_model_logits"]


function = method()
expect_line(function, 134, "output[:, 0, :, :] = torch.minimum(")
expect_line(function, 137, "output[:, 2, :, :] = torch.maximum(")
F134 = "lightning_uq_box/uq_methods/img2img_conformal.py:134:IPF104"
F137 = "lightning_uq_box/uq_methods/img2img_conformal.py:137:IPF104"
# (the method's source dedented by one level, as _rewrite compiles it)
OUT_OF_PLACE_134 = ("""output[:, 0, :, :] = torch.minimum(
        output[:, 0, :, :], output[:, 1, :, :] - 1e-6
    )""", """output = torch.cat([torch.minimum(
        output[:, 0:1], output[:, 1:2] - 1e-6
    ), output[:, 1:]], dim=1)""")
OUT_OF_PLACE_137 = ("""output[:, 2, :, :] = torch.maximum(
        output[:, 2, :, :], output[:, 1, :, :] + 1e-6
    )""", """output = torch.cat([output[:, :2], torch.maximum(
        output[:, 2:3], output[:, 1:2] + 1e-6
    )], dim=1)""")
SELF = types.SimpleNamespace(lam=0.5)


def scenario(edits=(), grad=True):
    def run():
        torch.manual_seed(0)
        weight = torch.randn(3, 1, requires_grad=True)  # a last layer: outputs [B, 3, H, W]
        x = torch.randn(2, 1, 4, 4)
        if grad:
            output = weight.view(1, 3, 1, 1) * x
        else:
            with torch.no_grad():  # as Img2ImgConformal.forward calls the model
                output = weight.view(1, 3, 1, 1) * x
        f = rewritten(function, edits) if edits else function
        pred = f(SELF, output, 0.3)
        (pred["upper"] - pred["lower"] + pred["pred"]).sum().backward() if grad else None
        assert (pred["upper"] >= pred["lower"]).all()
    return run


attempt(F134, "path", "adjust_model_logits(outputs [2, 3, 4, 4] requiring grad, lam=0.3), backward", scenario())
attempt(F137, "path", "the same with line 134 out of place (a fresh torch.cat): line 137 alone, backward",
        scenario([OUT_OF_PLACE_134]))
for finding in (F134, F137):
    attempt(finding, "control", "lines 134 and 137 both out of place (fresh torch.cat), backward",
            scenario([OUT_OF_PLACE_134, OUT_OF_PLACE_137]))
    attempt(finding, "context", "Img2ImgConformal.forward's use: the model's output computed under no_grad",
            scenario(grad=False))
