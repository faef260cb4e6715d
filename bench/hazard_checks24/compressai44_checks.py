"""compressai 1.2.8: the five proven findings of `inplacefix check` on main a4c47fa beyond 3c26737's
one (stop 44, prec44; the findings are unchanged by prec44). The encoders run the same
loop as the decoder of compressai_checks.py: `y_crop = y_hat[..., h:h+k, w:w+k]` (a view), `F.conv2d`
saves it for the masked weight's gradient (a parameter), and the quantized symbol is written into
`y_hat`, which the crop views.

- rasterscan.py:225, `raster_scan_compress_single_stream` (the library's GaussianConditional,
  MaskedConv2d and its real BufferedRansEncoder): the path backwards the returned `y_hat`.
- google.py:636, `JointAutoregressiveHierarchicalPriors._compress_ar` (the model built with N=M=8, the
  entropy bottleneck updated): the method returns the byte string; the path backwards the caller's
  `y_hat` it wrote into (the tensor `compress` pads and hands to it), as the convention of this
  directory (the function's own computation, with grad on, then backward of what it wrote).

Controls: the same with the crop copied (`.clone()`); context: under torch.no_grad() (the library's
`compress` is for inference)."""

import _shim  # noqa: F401

import torch
from _check import attempt, expect_line
from _rewrite import rewritten
from compressai.ans import BufferedRansEncoder
from compressai.entropy_models import GaussianConditional
from compressai.latent_codecs import rasterscan
from compressai.layers import MaskedConv2d
from compressai.models.google import JointAutoregressiveHierarchicalPriors
from compressai.models.vbr import JointAutoregressiveHierarchicalPriorsVbr

RASTER = "compressai/latent_codecs/rasterscan.py:225:IPF104"
F = rasterscan.raster_scan_compress_single_stream
expect_line(F, 204, "y_crop = y_hat[:, :, h : h + kernel_size, w : w + kernel_size]")
expect_line(F, 225, "y_hat[:, :, hp, wp] = y_hat_item")
CROP = "y_crop = y_hat[:, :, h : h + kernel_size, w : w + kernel_size]"


def encode(edits=(), grad=True):
    def run():
        torch.manual_seed(0)
        m = 4
        conditional = GaussianConditional(None)
        conditional.update_scale_table(torch.exp(torch.linspace(-2, 2, 8)))
        conditional.update()
        function = rewritten(F, edits) if edits else F
        params = torch.rand(1, 2 * m, 3, 3, requires_grad=True) * 1.0
        y = torch.rand(1, m, 3, 3, requires_grad=True) * 1.0
        with torch.set_grad_enabled(grad):
            y_hat = function(BufferedRansEncoder(), y, params, gaussian_conditional=conditional,
                             entropy_parameters=torch.nn.Conv2d(4 * m, 2 * m, 1),
                             context_prediction=MaskedConv2d(m, 2 * m, kernel_size=5, padding=2, stride=1),
                             height=3, width=3, padding=2, kernel_size=5)
        if grad:
            y_hat.sum().backward()
    return run


attempt(RASTER, "path", "raster_scan_compress_single_stream(3x3 latents, k=5), grad on, backward of y_hat", encode())
attempt(RASTER, "control", "the same with the crop copied (`.clone()`, line 204)", encode([(CROP, CROP + ".clone()")]))
attempt(RASTER, "context", "the same under torch.no_grad() (encoding for inference)", encode(grad=False))

GOOGLE = "compressai/models/google.py:636:IPF104"
G = JointAutoregressiveHierarchicalPriors._compress_ar
expect_line(G, 618, "y_crop = y_hat[:, :, h : h + kernel_size, w : w + kernel_size]")
expect_line(G, 636, "y_hat[:, :, h + padding, w + padding] = y_q + means_hat")


def compress_ar(edits=(), grad=True):
    def run():
        torch.manual_seed(0)
        model = JointAutoregressiveHierarchicalPriors(N=8, M=8)
        model.update(force=True)
        method = rewritten(G, edits) if edits else G
        y = torch.rand(1, 8, 3, 3, requires_grad=True) * 1.0
        params = torch.rand(1, 16, 3, 3, requires_grad=True) * 1.0
        with torch.set_grad_enabled(grad):
            y_hat = torch.nn.functional.pad(y, (2, 2, 2, 2))
            method(model, y_hat, params, 3, 3, 5, 2)
        if grad:
            y_hat.sum().backward()
    return run


attempt(GOOGLE, "path", "_compress_ar(3x3 latents, k=5), grad on, backward of the y_hat it wrote", compress_ar())
attempt(GOOGLE, "control", "the same with the crop copied (`.clone()`, line 618)",
        compress_ar([(CROP, CROP + ".clone()")]))
attempt(GOOGLE, "context", "the same under torch.no_grad() (compress is for inference)", compress_ar(grad=False))

VBR = "compressai/models/vbr.py:{}:IPF104"
V = JointAutoregressiveHierarchicalPriorsVbr._compress_ar
expect_line(V, 743, CROP)
expect_line(V, 766, "y_hat[:, :, h + padding, w + padding] = y_q + means_hat")
expect_line(V, 774, "y_hat[:, :, h + padding, w + padding] = (")
expect_line(V, 802, "y_hat[:, :, h + padding, w + padding] = (")


def compress_vbr(stage, no_quantoffset, edits=(), grad=True):
    def run():
        torch.manual_seed(0)
        model = JointAutoregressiveHierarchicalPriorsVbr(N=8, M=8)
        model.update(force=True)
        model.no_quantoffset = no_quantoffset
        method = rewritten(V, edits) if edits else V
        y = torch.rand(1, 8, 3, 3, requires_grad=True) * 1.0
        params = torch.rand(1, 16, 3, 3, requires_grad=True) * 1.0
        scale = torch.tensor(1.0)
        with torch.set_grad_enabled(grad):
            y_hat = torch.nn.functional.pad(y, (2, 2, 2, 2))
            method(model, y_hat, params, 3, 3, 5, 2, scale, 1.0 / scale, stage)
        if grad:
            y_hat.sum().backward()
    return run


for line, stage, offset, branch in ((766, 1, False, "stage 1"), (774, 2, True, "stage 2, no_quantoffset"),
                                    (802, 2, False, "stage 2, quantization offsets (the default)")):
    finding = VBR.format(line)
    attempt(finding, "path", f"_compress_ar ({branch}; 3x3 latents, k=5), grad on, backward of the y_hat it wrote",
            compress_vbr(stage, offset))
    attempt(finding, "control", "the same with the crop copied (`.clone()`, line 743)",
            compress_vbr(stage, offset, [(CROP, CROP + ".clone()")]))
    attempt(finding, "context", "the same under torch.no_grad() (compress is for inference)",
            compress_vbr(stage, offset, grad=False))
