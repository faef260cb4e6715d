# source: https://github.com/lucidrains/vector-quantize-pytorch/commit/82174ed9536c3ed58e2f450464ac88f63f2c2864 (PR #247)
# pattern: subscript_assign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# vector-quantize-pytorch (the VQ layer behind many audio / image tokenizers), vector_quantize_pytorch.py:
# Codebook.track_cluster_size_and_embed_avg zeroes the padded positions of the one-hot code assignments with
# `embed_onehot[~mask] = 0.` before counting code usage. In training, Codebook.forward has already computed
# `quantize = einsum('h b n c, h c d -> h b n d', unpacked_onehot, embed)` from a view of those one-hot codes; when the
# codebook is learnable (nn.Parameter, `learnable_codebook=True, ema_update=False`) that einsum saved the one-hot
# codes for the codebook's gradient, and the usage update runs whenever dead-code replacement is on
# (`threshold_ema_dead_code > 0`). With a padding mask the masked write bumps the saved tensor's version and the
# backward of the commitment / reconstruction loss raises "one of the variables needed for gradient computation has
# been modified by an inplace operation" ([1, N, codebook_size], version 1, expected 0). PR #247 ("fix(codebook):
# avoid in-place mask update", branch "autograd-safe-codebook-mask") writes
# `embed_onehot = embed_onehot.masked_fill(~rearrange(mask, '... -> ... 1'), 0.)`.
# The PR names no error text (a reducer at an earlier stop noted it as "fails under torch.compile; no eager
# reproduction found"); the configuration here (learnable codebook without EMA, dead-code replacement on, a padding
# mask) fails in eager mode on CPU with torch 2.13, as above.
# The library module is 3101helpers_vq_codebook.py (ref: ..._fixed.py); its header names its stand-ins.
# Stand-ins here: a linear encoder / decoder of width 8 around the quantizer, a codebook of 16 codes, a random batch of
# 3 sequences of length 6 padded by lengths (6, 4, 2), masked reconstruction loss plus the commitment loss, one
# backward pass.
import importlib
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
vq_mod = importlib.import_module("3101helpers_vq_codebook")


def compute():
    torch.manual_seed(0)
    encoder = nn.Linear(5, 8)
    decoder = nn.Linear(8, 5)
    vq = vq_mod.VectorQuantize(dim=8, codebook_size=16, learnable_codebook=True, ema_update=False,
                               threshold_ema_dead_code=2)
    vq.train()
    seq = torch.randn(3, 6, 5)
    lens = torch.tensor([6, 4, 2])
    mask = torch.arange(6)[None, :] < lens[:, None]

    z = encoder(seq)
    quantized, indices, commit_loss = vq(z, mask=mask)
    recon = decoder(quantized)
    recon_loss = ((recon - seq) ** 2).mean(-1)[mask].mean()
    loss = recon_loss + commit_loss
    loss.backward()
    return {
        "loss": loss.detach(),
        "indices": indices.float(),
        "encoder.weight.grad": encoder.weight.grad,
        "decoder.weight.grad": decoder.weight.grad,
        "codebook.grad": vq._codebook.embed.grad,
        "codebook": vq._codebook.embed.detach().clone(),
        "cluster_size": vq._codebook.cluster_size.detach().clone(),
        "embed_avg": vq._codebook.embed_avg.detach().clone(),
    }


if __name__ == "__main__":
    compute()
