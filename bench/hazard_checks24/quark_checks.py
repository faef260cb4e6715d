"""amd-quark 0.13 (torch/algorithm/gptaq/gptaq.py:227, `Gptaq.quantize`): the proven finding of `inplacefix
check` on main f57423a (stop 52, fresh52b). The column update `W1[:, i:] -= err1...matmul(...) -
w.unsqueeze(1).matmul(P1[i, i:].unsqueeze(0))` writes W1, of which `w = W1[:, i]` is a view that the matmul
would save if `P1` required grad. Nothing there requires grad: `W = self.layer.weight.data.clone()`, and `P` is
built from `self.delta_X_Xt` and the Hessian `self.H`, which the statistics hooks accumulate from
`input[0].data` (lines 326-339) into zeros made in `__init__`. `Gptaq.quantize` and `Gptaq._get_quantizer` are
compiled alone from the shipped file (quark's imports are not met here); the layer is an nn.Linear whose weight
requires grad, H and delta_X_Xt are accumulated as add_batch_quantized/nonquantized do (from detached
inputs), and the quantizer is a stand-in round-to-grid fake quantizer. quantize runs with grad on, and a
training step through the quantized layer runs backward: false. Context: `delta_X_Xt` requiring grad (which
quark never makes) with the quantized weights returned (line 257 as `return Q`) raises."""

import _shim  # noqa: F401
import linecache
import math
import time
import types

import torch
import torch.nn as nn
from _check import attempt
from _fresh52b import compile_alone, src

SRC = src("quark/torch/algorithm/gptaq/gptaq.py")
assert linecache.getline(SRC, 227).strip() == "W1[:, i:] -= err1.unsqueeze(1).matmul(L1T[i, i:].unsqueeze(0)) - w.unsqueeze(1).matmul("


class FakeQuant:
    """Stand-in for quark's ScaledFakeQuantize: per-channel int4-like grid."""

    def observe(self, w):
        self.scale = w.abs().amax(dim=1, keepdim=True).clamp_min(1e-8) / 7
        self.zero_point = torch.zeros_like(self.scale)

    def fake_quantize_with_qparams(self, x, scale, zero_point):
        return torch.clamp(torch.round(x / scale), -8, 7) * scale


def make(delta_grad=False, replace=None):
    ns = compile_alone(SRC, {"Gptaq.quantize", "Gptaq._get_quantizer"},
                       {"torch": torch, "nn": nn, "math": math, "time": time, "copy": __import__("copy"),
                        "logger": types.SimpleNamespace(info=lambda *a: None), "META": torch.device("meta"),
                        "get_device": lambda layer: layer.weight.device}, replace=replace)
    torch.manual_seed(0)
    layer = nn.Linear(8, 4)
    x = torch.randn(16, 8, requires_grad=True)  # hook inputs are taken with .data, as quark's hooks do
    xq = x.data + 0.01 * torch.randn(16, 8)
    n = 16
    h = math.sqrt(2 / n) * xq.t()
    H = h @ h.t()
    delta = (math.sqrt(2 / n) * x.data.t() - h) @ h.t()
    if delta_grad:
        delta = delta + torch.zeros_like(delta, requires_grad=True)  # not a leaf: line 150 writes it
    q = FakeQuant()
    self = types.SimpleNamespace(layer=layer, H=H, delta_X_Xt=delta, columns=8, device=layer.weight.device,
                                 quantizer=q, _get_quantizer=None)
    self._get_quantizer = lambda *a: ns["_get_quantizer"](self, *a)
    layer._weight_quantizer = types.SimpleNamespace()
    return ns, self, layer


def path():
    ns, self, layer = make()
    ns["quantize"](self, blocksize=4, percdamp=0.01, alpha=0.25, group_size=-1, actorder=False, static_groups=False)
    layer(torch.randn(3, 8, requires_grad=True)).pow(2).sum().backward()


def context():
    ns, self, layer = make(True, {257: "return Q"})
    Q = ns["quantize"](self, blocksize=4, percdamp=0.01, alpha=0.25, group_size=-1, actorder=False,
                       static_groups=False)
    Q.sum().backward()


F227 = "quark/torch/algorithm/gptaq/gptaq.py:227:IPF104"
attempt(F227, "path", "Gptaq.quantize with grad on (weight requiring grad, statistics from .data inputs), then a "
        "training step through the quantized layer: runs", path)
attempt(F227, "context", "delta_X_Xt requiring grad (quark never makes it so), quantized weights returned and "
        "backpropagated: raises", context)
