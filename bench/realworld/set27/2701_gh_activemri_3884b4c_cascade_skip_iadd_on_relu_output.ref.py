# reference fix for 2701: commit 3884b4c in the library module (2701helpers_activemri_reconstruction_fixed.py):
# `encoder_output = encoder_output + residual_bottleneck_output` out of place; the rest as in the original.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
rec = importlib.import_module("2701helpers_activemri_reconstruction_fixed")


def compute():
    torch.manual_seed(0)
    net = rec.ReconstructorNetwork(number_of_encoder_input_channels=2, number_of_decoder_output_channels=3,
                                   number_of_filters=8, number_of_layers_residual_bottleneck=2,
                                   number_of_cascade_blocks=2, mask_embed_dim=2, n_downsampling=2, img_width=16)
    target = torch.randn(2, 2, 16, 16)
    mask = (torch.rand(2, 1, 1, 16) < 0.4).float()
    zero_filled = net.IFFT(mask * net.FFT(target))
    reconstructed, uncertainty, _ = net(zero_filled, mask)
    loss = (reconstructed - target).abs().mean() + uncertainty.mean()
    loss.backward()
    enc0 = net.encoders_all_cascade_blocks[0][1]
    enc1 = net.encoders_all_cascade_blocks[1][1]
    dec1 = net.decoders_all_cascade_blocks[1][-1]
    return {
        "encoder0.conv.weight.grad": enc0.weight.grad,
        "encoder1.conv.weight.grad": enc1.weight.grad,
        "decoder1.out.weight.grad": dec1.weight.grad,
        "bottleneck0.conv.weight.grad": net.residual_bottlenecks_all_cascade_blocks[0][0].conv_block[1].weight.grad,
        "loss": loss.detach(),
    }


if __name__ == "__main__":
    compute()
