# reference fix for 3101: commit 82174ed (PR #247) in the library module (3101helpers_vq_codebook_fixed.py):
# `embed_onehot = embed_onehot.masked_fill(~rearrange(mask, '... -> ... 1'), 0.)` in
# Codebook.track_cluster_size_and_embed_avg.
import importlib
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
vq_mod = importlib.import_module("3101helpers_vq_codebook_fixed")


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
