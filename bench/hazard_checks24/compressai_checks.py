"""compressai 1.2.8: the one proven finding of `inplacefix check` (main at 3c26737, stop 43):
`raster_scan_decompress_single_stream` (compressai/latent_codecs/rasterscan.py) convolves the crop
`y_crop = y_hat[..., h:h+k, w:w+k]` (line 271; `F.conv2d` saves it for the masked weight's
gradient, a parameter) and writes the decoded symbol into `y_hat` (line 294), which the crop views.
The path runs the decoding loop with the library's modules (a stand-in range decoder returning
symbol 0, the entropy parameters requiring grad) and calls backward; the control the same with
the crop copied (`.clone()`, line 271); the context:
the same loop with grad off (decoding for inference), where nothing is saved."""

import _shim  # noqa: F401

import torch
from _check import attempt, expect_line
from _rewrite import rewritten
from compressai.entropy_models import GaussianConditional
from compressai.latent_codecs import rasterscan
from compressai.layers import MaskedConv2d

FINDING = "compressai/latent_codecs/rasterscan.py:294:IPF104"
F = rasterscan.raster_scan_decompress_single_stream
expect_line(F, 271, "y_crop = y_hat[:, :, h : h + kernel_size, w : w + kernel_size]")
expect_line(F, 294, "y_hat[:, :, hp, wp] = y_hat_item")


class Decoder:  # a range decoder that decodes every symbol as 0
    def decode_stream(self, indexes, cdf, cdf_lengths, offsets):
        return [0] * len(indexes)


def decode(edits=(), grad=True):
    def run():
        torch.manual_seed(0)
        m = 4
        conditional = GaussianConditional(None)
        conditional.update_scale_table(torch.exp(torch.linspace(-2, 2, 8)))
        conditional.update()
        function = rewritten(F, edits) if edits else F
        params = torch.rand(1, 2 * m, 3, 3, requires_grad=True) * 1.0
        with torch.set_grad_enabled(grad):
            y = function(Decoder(), params, gaussian_conditional=conditional,
                         entropy_parameters=torch.nn.Conv2d(4 * m, 2 * m, 1),
                         context_prediction=MaskedConv2d(m, 2 * m, kernel_size=5, padding=2, stride=1),
                         height=3, width=3, padding=2, kernel_size=5, device="cpu")
        if grad:
            y.sum().backward()
    return run


attempt(FINDING, "path", "raster_scan_decompress_single_stream(3x3 latents, k=5), grad on, backward", decode())
attempt(FINDING, "control", "the same with `y_crop = y_hat[...].clone()` (the crop copied, line 271)",
        decode([("y_crop = y_hat[:, :, h : h + kernel_size, w : w + kernel_size]",
                 "y_crop = y_hat[:, :, h : h + kernel_size, w : w + kernel_size].clone()")]))
attempt(FINDING, "context", "the same under torch.no_grad() (decoding for inference)", decode(grad=False))
