# source: https://github.com/NVIDIA/NeMo/commit/5e7b56ae0234ed98d8d15b46eef409d9e7d2e682
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# NeMo (NVIDIA/NeMo), PR #4383 "Quick wav2vec fix. In-place operation adding convolutional positions to encoder was
# overwriting leaf history. Wasn't caught on previous torch versions." (commit 5e7b56ae02, June 2022; the same change
# reached the release branches through later merge commits). Wav2VecTransformerEncoder.forward zeroes the padded
# frames, runs the positional convolution `signal_conv = self.pos_conv(audio_signal)` (a weight-normed Conv1d, which
# saves its input for backward, then SamePad and GELU), and adds it back with `audio_signal += signal_conv`: the add
# writes into the tensor the convolution saved, so wav2vec pre-training fails at backward ("... output 0 of
# AsStrided, is at version 3; expected version 2"). Fix: `audio_signal = audio_signal + signal_conv`.
# Library module: 3505helpers_nemo_wav2vec_modules.py (ref: ..._fixed.py; see its header for the stand-in
# TransformerEncoder). Stand-ins here: the feature side of the wav2vec model (ConvFeatureEncoder, masking and the
# quantizer) is a Linear projection of random features transposed to [B, C, T] as the encoder receives them; the
# contrastive loss is a mean-squared regression of the context to a random target over the valid frames; a small
# config (emb 8, conv_pos 4 in 2 groups, two layers).
import importlib
import os
import sys
from types import SimpleNamespace

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
wav2vec_modules = importlib.import_module("3505helpers_nemo_wav2vec_modules")


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
