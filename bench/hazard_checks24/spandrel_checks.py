"""spandrel 0.4.2: the three proven findings of `inplacefix check` (main at e95ccd4, stop 42), all in
the eval-mode branch of PLKSR's partial large-kernel convolutions
(`spandrel/architectures/PLKSR/__arch/PLKSR.py`): `PLKConv2d.forward` writes
`x[:, : self.idx] = x[:, : self.idx] + self.conv(x[:, : self.idx])` (line 76, `with_idt=True`) or
`x[:, : self.idx] = self.conv(x[:, : self.idx])` (line 78), and `RectSparsePLKConv2d.forward` writes
the sum of three convolutions of `x[:, : self.idx]` back into it (lines 107-111). The convolution
saves its input (a view of `x`) to compute its weight's gradient; the write bumps `x`'s version.

The path runs each layer in eval mode with grad on (weights requiring grad, as built) on an input
that requires grad, then backward; the context the same on a plain data input (no grad: the
weights alone make the convolution save its input); the control the same with the write made out
of place (`x = torch.cat([..., x[:, self.idx :]], dim=1)`, line count kept). spandrel runs its
models for inference (usually under `torch.no_grad()`), where nothing is saved."""

import _shim  # noqa: F401
import torch
from _check import attempt, expect_line
from _rewrite import replaced, rewritten
from spandrel.architectures.PLKSR.__arch import PLKSR as M

IDT = "spandrel/architectures/PLKSR/__arch/PLKSR.py:76:IPF104"
PLAIN = "spandrel/architectures/PLKSR/__arch/PLKSR.py:78:IPF104"
RECT = "spandrel/architectures/PLKSR/__arch/PLKSR.py:107:IPF104"
expect_line(M.PLKConv2d.forward, 76, "x[:, : self.idx] = x[:, : self.idx] + self.conv(x[:, : self.idx])")
expect_line(M.PLKConv2d.forward, 78, "x[:, : self.idx] = self.conv(x[:, : self.idx])")
expect_line(M.RectSparsePLKConv2d.forward, 107, "x[:, : self.idx] = (")
expect_line(M.RectSparsePLKConv2d.forward, 108, "self.mn_conv(x[:, : self.idx])")

OUT_IDT = [("x[:, : self.idx] = x[:, : self.idx] + self.conv(x[:, : self.idx])",
            "x = torch.cat([x[:, : self.idx] + self.conv(x[:, : self.idx]), x[:, self.idx :]], dim=1)")]
OUT_PLAIN = [("x[:, : self.idx] = self.conv(x[:, : self.idx])",
              "x = torch.cat([self.conv(x[:, : self.idx]), x[:, self.idx :]], dim=1)")]
OUT_RECT = [("x[:, : self.idx] = (", "x = torch.cat([("),
            ("+ self.nn_conv(x[:, : self.idx])\n        )", "+ self.nn_conv(x[:, : self.idx])\n        ), x[:, self.idx :]], dim=1)")]


def layer_run(make, cls, grad, edits=()):
    def run():
        torch.manual_seed(0)
        layer = make().eval()
        x = torch.randn(1, 8, 9, 9)
        if grad:
            x = x.requires_grad_() * 1.0
        if edits:
            with replaced(cls, "forward", rewritten(cls.forward, edits)):
                out = layer(x)
        else:
            out = layer(x)
        out.square().sum().backward()
    return run


for finding, make, edits, what in (
        (IDT, lambda: M.PLKConv2d(4, 5, with_idt=True), OUT_IDT, "PLKConv2d(4, 5, with_idt=True)"),
        (PLAIN, lambda: M.PLKConv2d(4, 5, with_idt=False), OUT_PLAIN, "PLKConv2d(4, 5, with_idt=False)"),
        (RECT, lambda: M.RectSparsePLKConv2d(4, 9), OUT_RECT, "RectSparsePLKConv2d(4, 9)")):
    cls = type(make())
    attempt(finding, "path", f"{what}.eval() with grad on, input requiring grad, backward", layer_run(make, cls, True))
    attempt(finding, "context", f"{what}.eval() with grad on, a data input (no grad), backward",
            layer_run(make, cls, False))
    attempt(finding, "control", "the same, the write made out of place (torch.cat)", layer_run(make, cls, True, edits))
