"""audio-separator 0.47.1 (audio_separator/separator/uvr_lib_v5/mdxnet.py:113, `ConvTDFNet.forward`): the proven
finding of `inplacefix check` on main 97a004a (stop 52, fresh52). `x = self.us[i](x)` ends in `nn.ReLU()`
(ReLU saves its output), then `x *= ds_outputs[-i - 1]` writes it. The sibling `modules.py` (torch only) is
loaded from its file; `AbstractMDXNet` (a LightningModule: pytorch_lightning not needed) and `ConvTDFNet` are
compiled alone from the shipped file with `nn.Module` as the base. The module's own parameters require grad,
the input does not: it raises whenever the network runs with grad on (training; audio-separator itself
separates under inference, the context of most of its use)."""

import _shim  # noqa: F401
import importlib.util
import linecache

import torch
import torch.nn as nn
from _check import attempt
from _fresh52 import compile_alone, src

SRC = src("audio_separator/separator/uvr_lib_v5/mdxnet.py")
MODULES = src("audio_separator/separator/uvr_lib_v5/modules.py")
assert linecache.getline(SRC, 112).strip() == "x = self.us[i](x)"
assert linecache.getline(SRC, 113).strip() == "x *= ds_outputs[-i - 1]"
spec = importlib.util.spec_from_file_location("uvr_modules", MODULES)
modules = importlib.util.module_from_spec(spec)
spec.loader.exec_module(modules)


def run(replace, grad=True):
    def go():
        ns = compile_alone(SRC, {"AbstractMDXNet", "ConvTDFNet"}, {"torch": torch, "nn": nn, "TFC_TDF": modules.TFC_TDF},
                           replace=replace, bases={"AbstractMDXNet": ["nn.Module"]})
        torch.manual_seed(0)
        net = ns["ConvTDFNet"](target_name="vocals", lr=1e-3, optimizer="rmsprop", dim_c=4, dim_f=16, dim_t=16,
                               n_fft=62, hop_length=16, num_blocks=5, l=1, g=4, k=3, bn=2, bias=True, overlap=0)
        with torch.set_grad_enabled(grad):
            out = net(torch.randn(2, 4, 16, 16))
        if grad:
            out.pow(2).mean().backward()
    return go


F113 = "audio_separator/separator/uvr_lib_v5/mdxnet.py:113:IPF101"
attempt(F113, "path", "ConvTDFNet(num_blocks=5, BatchNorm) in training, a plain input, backward", run({}))
attempt(F113, "control", "line 113 as `x = x * ds_outputs[-i - 1]`", run({113: "x = x * ds_outputs[-i - 1]"}))
attempt(F113, "context", "the same forward under no_grad (separation): runs", run({}, False))
