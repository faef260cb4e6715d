# source: https://github.com/facebookresearch/active-mri-acquisition/commit/3884b4c247cb27ada0c749340fc29ce35e2bd2d0
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# active-mri-acquisition (Facebook Research, MRI reconstruction for active k-space acquisition), models/reconstruction.py,
# ReconstructorNetwork.forward: from the second cascade block on, the encoder's output gets the previous block's
# bottleneck output as a skip connection, `encoder_output += residual_bottleneck_output`. The encoder ends with
# `nn.ReLU(True)`, whose output ReluBackward saved, so the reconstructor's backward fails with "modified by an inplace
# operation ... output 0 of ReluBackward0". Commit 3884b4c ("removed in place computation of skip connection. Because
# some functions (in this case *) require the inputs to never change after they compute the output") writes
# `encoder_output = encoder_output + residual_bottleneck_output`.
# The library module is 2701helpers_activemri_reconstruction.py (ref: ..._fixed.py); its header names its stand-ins.
# Stand-ins here: a small network (8 filters, 2 downsamplings, 2 bottleneck blocks, 2 cascade blocks, mask embedding
# of 2 channels, 16x16 images) instead of the defaults (128 filters, 128x128); a random 2-channel (real, imaginary)
# ground truth, its masked k-space turned back into the zero-filled input, and a random column mask; the training
# loss (the trainer's is not part of the commit) is an L1 reconstruction term plus the mean of the uncertainty map.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
rec = importlib.import_module("2701helpers_activemri_reconstruction")


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
