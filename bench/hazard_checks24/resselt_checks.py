"""resselt 1.4.1 (resselt/archs/gfisrv2/arch.py:573-576 `InceptionDWConv2d.forward`; plksr/plksr.py:67, :78, :80
`PLKConv2d.forward`, :118 `RectSparsePLKConv2d.forward`, :157 `SparsePLKConv2d.forward`; plksr/rplksr.py:36
`PLKConv2d.forward`): the proven findings of `inplacefix check` (stop 54, fresh54b, end of stop). The inference
paths of these partial convolutions (`not self.training`, or `is_convert` after reparametrisation) write the
convolution's result back into the caller's x: `x[:, :idx] = self.conv(x[:, :idx])`. The convolution saves its
input (the slice of x) for its weight's gradient, so the write spoils it, and any backward through the layer in
eval mode with grad on raises (the weights require grad by construction). resselt loads these architectures for
super-resolution inference (under no_grad): real by this file's convention (eval mode with grad on). In GFISRV2's
own block, x is an output of `torch.split` (GatedCNNBlock.forward, :613), so in grad mode :573 already raises in the
forward (a multi-output view written in place). Each class is compiled alone from the shipped file and run on an x
that requires grad (not a view); for gfisrv2's four lines, the other three are made out of place, and the shift is
chosen so that the line's branch is a Conv2d (its FourierUnit branch saves nothing of x)."""

import _shim  # noqa: F401
import linecache
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.init import trunc_normal_
from _check import attempt
from _fresh53 import compile_alone, src

GFI = src("resselt/archs/gfisrv2/arch.py")
PLK = src("resselt/archs/plksr/plksr.py")
RPLK = src("resselt/archs/plksr/rplksr.py")
NS = {"torch": torch, "nn": nn, "F": F, "math": math, "np": np, "Tensor": torch.Tensor, "Literal": None,
      "trunc_normal_": trunc_normal_, "Sequence": None, "partial": None, "DySample": None}

GFI_LINES = {573: ("pconv", 0), 574: ("dwconv_hw", 1), 575: ("dwconv_w", 2), 576: ("dwconv_h", 3)}
for number, (conv, k) in GFI_LINES.items():
    assert linecache.getline(GFI, number).strip() == f"x[:, s{k}:e{k}] = self.{conv}(x[:, s{k}:e{k}])"


def gfi(line, out):
    replace = {n: f"x = torch.cat([x[:, :s{k}], self.{c}(x[:, s{k}:e{k}]), x[:, e{k}:]], dim=1)"
               for n, (c, k) in GFI_LINES.items() if n in out}
    ns = compile_alone(GFI, {"InceptionDWConv2d", "FourierUnit", "RMSNorm"}, dict(NS), replace=replace)

    def go():
        torch.manual_seed(0)
        shift = 1 if line == 573 else 0  # convs[0] is the FourierUnit; the line's branch is a Conv2d
        m = ns["InceptionDWConv2d"](16, shift=shift).eval()
        x = torch.randn(1, 16, 8, 8, requires_grad=True) * 1.0
        m(x).sum().backward()
    return go


for number in GFI_LINES:
    FID = f"resselt/archs/gfisrv2/arch.py:{number}:IPF104"
    others = set(GFI_LINES) - {number}
    attempt(FID, "path", f"InceptionDWConv2d(16).eval() on an x that requires grad, the other three writes out of "
            f"place: :{number} raises", gfi(number, others))
    attempt(FID, "control", "all four writes out of place: runs", gfi(number, set(GFI_LINES)))


def block():
    ns = compile_alone(GFI, {"GatedCNNBlock", "InceptionDWConv2d", "FourierUnit", "RMSNorm"}, dict(NS))

    def go():
        torch.manual_seed(0)
        m = ns["GatedCNNBlock"](16, shift=1).eval()
        m(torch.randn(1, 16, 8, 8)).sum().backward()
    return go


attempt("resselt/archs/gfisrv2/arch.py:573:IPF104", "context", "GFISRV2's own GatedCNNBlock(16).eval() with grad on: "
        "the forward raises at :573 (x is an output of torch.split)", block())

PLK_CASES = {  # line: (file, class, set-up, shipped text, out of place)
    (PLK, 67): ("PLKConv2d", dict(dim=4, kernel_size=5, with_idt=False), "convert",
                "x[:, : self.idx] = self.conv(x[:, : self.idx])",
                "x = torch.cat([self.conv(x[:, : self.idx]), x[:, self.idx:]], dim=1)"),
    (PLK, 78): ("PLKConv2d", dict(dim=4, kernel_size=5, with_idt=True), "eval",
                "x[:, : self.idx] = x[:, : self.idx] + self.conv(x[:, : self.idx])",
                "x = torch.cat([x[:, : self.idx] + self.conv(x[:, : self.idx]), x[:, self.idx:]], dim=1)"),
    (PLK, 80): ("PLKConv2d", dict(dim=4, kernel_size=5, with_idt=False), "eval",
                "x[:, : self.idx] = self.conv(x[:, : self.idx])",
                "x = torch.cat([self.conv(x[:, : self.idx]), x[:, self.idx:]], dim=1)"),
    (PLK, 118): ("RectSparsePLKConv2d", dict(dim=4, kernel_size=9), "eval",
                 "x[:, : self.idx] = self.mn_conv(x[:, : self.idx]) + self.nm_conv(x[:, : self.idx]) + "
                 "self.nn_conv(x[:, : self.idx])",
                 "x = torch.cat([self.mn_conv(x[:, : self.idx]) + self.nm_conv(x[:, : self.idx]) + "
                 "self.nn_conv(x[:, : self.idx]), x[:, self.idx:]], dim=1)"),
    (PLK, 157): ("SparsePLKConv2d", dict(dim=4, max_kernel_size=7, sub_kernel_sizes=[3, 5], dilations=[1, 1],
                                         use_max_kernel=False, with_idt=False), "sparse-convert",
                 "x[:, : self.idx, :, :] = self.conv(x[:, : self.idx, :, :])",
                 "x = torch.cat([self.conv(x[:, : self.idx, :, :]), x[:, self.idx:]], dim=1)"),
    (RPLK, 36): ("PLKConv2d", dict(dim=4, kernel_size=5), "eval",
                 "x[:, : self.idx] = self.conv(x[:, : self.idx])",
                 "x = torch.cat([self.conv(x[:, : self.idx]), x[:, self.idx:]], dim=1)"),
}


def plk(path, line, cls, kwargs, setup, text, control):
    ns = compile_alone(path, {cls}, dict(NS), replace={line: text} if control else {})

    def go():
        torch.manual_seed(0)
        m = ns[cls](**kwargs).eval()
        if setup == "convert":
            m.convert()  # the reparametrised layer (is_convert), as resselt's converted models run
        elif setup == "sparse-convert":  # its convert() builds self.conv from the branches; a stand-in of that conv
            m.conv, m.is_convert = nn.Conv2d(4, 4, 7, 1, 3), True
        x = torch.randn(1, 8, 6, 6, requires_grad=True) * 1.0
        m(x).sum().backward()
    return go


for (path, line), (cls, kwargs, setup, text, out) in PLK_CASES.items():
    assert linecache.getline(path, line).strip() == text, line
    rel = path.split("/resselt/", 1)[1]
    FID = f"{rel}:{line}:IPF104"
    mode = {"eval": "eval()", "convert": "eval() after convert()", "sparse-convert": "eval(), is_convert"}[setup]
    attempt(FID, "path", f"{cls}({', '.join(f'{k}={v}' for k, v in kwargs.items())}).{mode} on an x that "
            f"requires grad: raises", plk(path, line, cls, kwargs, setup, text, False))
    attempt(FID, "control", f"the same with :{line} out of place: runs", plk(path, line, cls, kwargs, setup, out, True))
