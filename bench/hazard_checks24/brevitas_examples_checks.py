"""brevitas 0.13.4 (`brevitas_examples`): the three proven findings of `inplacefix check` on main d1b4fd6
(stop 51, prec51b). The package's imports (brevitas, gguf, transformers) are not met here, so each driver
compiles the flagged functions alone from the shipped file (_prec51b.compile_alone), with torch and numpy.

- imagenet_classification/a2q/ep_init.py:71 IPF104: `l1_proj_matrix_per_channel(weights, radius)` takes
  `w = weights[i]` (a view), `euclidean_projection_onto_l1_ball(w, z)` calls `w.abs()` (abs saves its input,
  line 49), then `weights[i] = v` writes the view's base. Path: weights a non-leaf requiring grad, backward
  through the result raises. Control: line 71 as
  `weights = torch.cat([weights[:i], v[None], weights[i + 1:]])` (out of place): runs. Context: apply_ep_init
  hands it `w.detach()` (module_stats), so the library's own use keeps grad off: real by this file's convention.
- llm/llm_quant/awq/quantizer.py:64 IPF103: `pseudo_quantize_tensor(w, inplace=True)` writes
  `w.div_(scales)...mul_(scales)`. The report names `w.abs()` (line 53, the `zero_point=False` arm) as the save;
  that arm cannot run: line 52 `assert min_val is None` reads a name bound only on the other arm
  (UnboundLocalError, shown as context). On the default arm `w.amax(dim=1)` (line 45, amax saves its input)
  saves w, and the write raises there: path = w a non-leaf requiring grad, zero_point=True, inplace=True,
  backward raises. Control: inplace=False (the library's out-of-place arm, line 66): runs. Context: AWQ
  quantizes weights under no_grad: real by this file's convention (the line raises; the report's reason is
  on a dead arm).
- llm/gguf_export/convert.py:6563 IPF101: `data_torch = data_torch.float()` then
  `data_torch /= torch.norm(data_torch, p=2, dim=0, keepdim=True) + 1e-7` (norm saves its input and output).
  The method (BailingMoeModel.modify_tensors) needs gguf; lines 6562-6563 are replayed as shipped (read from the
  file) on a bf16 tensor requiring grad (so `.float()` makes a new tensor, as for the bf16 checkpoints it
  converts). Path raises; control `data_torch = data_torch / (...)` runs. Context: the converter handles loaded
  checkpoint tensors without grad: real by this file's convention.
"""

import _shim  # noqa: F401
import linecache
import os

import numpy as np
import torch
from _check import attempt
from _prec51b import PK, compile_alone

EP = os.path.join(PK, "brevitas_examples/imagenet_classification/a2q/ep_init.py")
AWQ = os.path.join(PK, "brevitas_examples/llm/llm_quant/awq/quantizer.py")
CONV = os.path.join(PK, "brevitas_examples/llm/gguf_export/convert.py")
for path, line, snippet in ((EP, 71, "weights[i] = v"), (EP, 49, "vec.abs()"),
                            (AWQ, 64, "w.div_(scales).round_()"), (AWQ, 53, "w.abs().amax"),
                            (CONV, 6563, "data_torch /= torch.norm(data_torch")):
    if snippet not in linecache.getline(path, line):
        raise SystemExit(f"{path}:{line} moved")

EP_NAMES = {"_euclidean_projection_onto_positive_simplex", "euclidean_projection_onto_l1_ball",
            "l1_proj_matrix_per_channel"}


def ep(control):
    def go():
        ns = compile_alone(EP, EP_NAMES, {"torch": torch, "np": np, "Tensor": torch.Tensor}, replace={
            71: "weights = torch.cat([weights[:i], v[None], weights[i + 1:]])"} if control else None)
        torch.manual_seed(0)
        p = torch.randn(3, 5, requires_grad=True)
        out = ns["l1_proj_matrix_per_channel"](p * 1.0, torch.tensor(1.0))
        (out * torch.randn(3, 5)).sum().backward()
    return go


def awq(inplace, zero_point=True):
    def go():
        ns = compile_alone(AWQ, {"pseudo_quantize_tensor"}, {"torch": torch})
        torch.manual_seed(0)
        p = torch.randn(4, 8, requires_grad=True)
        w = ns["pseudo_quantize_tensor"](p * 1.0, n_bit=4, zero_point=zero_point, inplace=inplace)
        (w * torch.randn(4, 8)).sum().backward()
    return go


def conv(control):
    def go():
        code = linecache.getline(CONV, 6562).strip() + "\n" + linecache.getline(CONV, 6563).strip()
        if control:
            code = code.replace("data_torch /= torch.norm", "data_torch = data_torch / torch.norm")
            code = code.replace("+ 1e-7", "+ 1e-7)").replace("/ torch.norm", "/ (torch.norm")
        torch.manual_seed(0)
        leaf = torch.randn(4, 3, dtype=torch.bfloat16, requires_grad=True)
        ns = {"torch": torch, "data_torch": leaf * 1}
        exec(code, ns)
        ns["data_torch"].sum().backward()
    return go


attempt("brevitas_examples/imagenet_classification/a2q/ep_init.py:71:IPF104", "path",
        "l1_proj_matrix_per_channel(non-leaf weights requiring grad, radius 1), backward", ep(False))
attempt("brevitas_examples/imagenet_classification/a2q/ep_init.py:71:IPF104", "control",
        "the same with line 71 out of place (torch.cat)", ep(True))
attempt("brevitas_examples/llm/llm_quant/awq/quantizer.py:64:IPF103", "path",
        "pseudo_quantize_tensor(non-leaf w requiring grad, zero_point=True, inplace=True), backward", awq(True))
attempt("brevitas_examples/llm/llm_quant/awq/quantizer.py:64:IPF103", "control",
        "the same with inplace=False (the library's out-of-place arm)", awq(False))
attempt("brevitas_examples/llm/llm_quant/awq/quantizer.py:64:IPF103", "context",
        "zero_point=False (the arm of the reported save, line 53): line 52 reads an unbound name",
        awq(True, zero_point=False), expected=(UnboundLocalError,))
attempt("brevitas_examples/llm/gguf_export/convert.py:6563:IPF101", "path",
        "lines 6562-6563 as shipped on a bf16 non-leaf requiring grad, backward", conv(False))
attempt("brevitas_examples/llm/gguf_export/convert.py:6563:IPF101", "control",
        "the same with `data_torch = data_torch / (torch.norm(...) + 1e-7)`", conv(True))
