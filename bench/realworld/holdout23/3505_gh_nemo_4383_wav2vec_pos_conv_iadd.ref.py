# reference fix for 3505: NeMo PR #4383 (5e7b56ae02) in the library module (3505helpers_nemo_wav2vec_modules_fixed.py):
# `audio_signal = audio_signal + signal_conv`.
import importlib
import os
import sys
from types import SimpleNamespace

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
wav2vec_modules = importlib.import_module("3505helpers_nemo_wav2vec_modules_fixed")


def compute():
    torch.manual_seed(0)
    emb = 8
    encoder = wav2vec_modules.Wav2VecTransformerEncoder(
        pos_embed=SimpleNamespace(embedding_dim=emb, conv_pos=4, conv_pos_groups=2),
        transformer={"num_layers": 2, "hidden_size": emb, "inner_size": 16, "num_attention_heads": 2,
                     "attn_layer_dropout": 0.1},
        layer_drop=0.0)
    post_extract_proj = nn.Linear(6, emb)
    features = torch.randn(2, 10, 6)  # B, T, feature channels from the ConvFeatureEncoder
    length = torch.tensor([10, 7])
    target = torch.randn(2, emb, 10)
    audio_signal = post_extract_proj(features).transpose(1, 2)  # B, C, T
    context, _ = encoder(audio_signal, length)
    valid = (torch.arange(10)[None, :] < length[:, None]).float()[:, None, :]
    loss = (((context - target) ** 2) * valid).sum() / valid.sum()
    loss.backward()
    out = {"loss": loss.detach(), "proj.grad": post_extract_proj.weight.grad.clone()}
    for name, p in encoder.named_parameters():
        if p.grad is not None:
            out["grad." + name] = p.grad.clone()
    return out


if __name__ == "__main__":
    compute()
