# source: https://github.com/jasonppy/word-discovery/pull/4
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# VG-HuBERT word discovery (models/audio_encoder.py, AudioEncoder.forward, wav2vec2/fairseq-style encoder): the
# convolutional positional embedding is added in place, `x_conv = self.pos_conv(x.transpose(1, 2))` ...
# `x += x_conv`, while the pos_conv Conv1d saved x.transpose(1, 2) (a view of x) -> "[torch.cuda.FloatTensor
# [BS, 768, 399]], which is output 0 of AsStridedBackward0, is at version 1". Merged PR #4: `x = x + x_conv` (in both
# forward methods). The CNN feature extractor and the fairseq TransformerEncoder are replaced by small stand-ins;
# widths 768 -> 16, conv_pos 128 -> 4 (even, so SamePad trims one frame as in the original).
import math

import torch
import torch.nn as nn


class SamePad(nn.Module):
    def __init__(self, kernel_size, causal=False):
        super().__init__()
        if causal:
            self.remove = kernel_size - 1
        else:
            self.remove = 1 if kernel_size % 2 == 0 else 0

    def forward(self, x):
        if self.remove > 0:
            x = x[:, :, : -self.remove]
        return x


class Args:
    encoder_embed_dim = 16
    conv_pos = 4
    conv_pos_groups = 4
    dropout = 0.1
    use_audio_cls_token = True


class AudioEncoder(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.embed = 8
        self.feature_grad_mult = 1.0
        self.feature_extractor = nn.Sequential(nn.Conv1d(1, self.embed, 10, stride=5), nn.GELU(),
                                               nn.Conv1d(self.embed, self.embed, 3, stride=2), nn.GELU())
        self.post_extract_proj = nn.Linear(self.embed, args.encoder_embed_dim)
        self.dropout_input = nn.Dropout(0.1)
        self.dropout_features = nn.Dropout(0.1)
        self.pos_conv = nn.Conv1d(args.encoder_embed_dim, args.encoder_embed_dim, kernel_size=args.conv_pos,
                                  padding=args.conv_pos // 2, groups=args.conv_pos_groups)
        dropout = 0
        std = math.sqrt((4 * (1.0 - dropout)) / (args.conv_pos * self.args.encoder_embed_dim))
        nn.init.normal_(self.pos_conv.weight, mean=0, std=std)
        nn.init.constant_(self.pos_conv.bias, 0)
        self.pos_conv = nn.utils.weight_norm(self.pos_conv, name="weight", dim=2)
        self.pos_conv = nn.Sequential(self.pos_conv, SamePad(args.conv_pos), nn.GELU())
        self.encoder = nn.TransformerEncoderLayer(args.encoder_embed_dim, 2, 32, dropout=0.0, batch_first=True)
        self.layer_norm = nn.LayerNorm(self.embed)
        if self.args.use_audio_cls_token:
            self.cls_token = torch.nn.Parameter(torch.randn((1, 1, args.encoder_embed_dim)), requires_grad=True)

    def forward(self, source, padding_mask=None):
        features = self.feature_extractor(source)
        features_pen = features.float().pow(2).mean()

        features = features.transpose(1, 2)
        features = self.layer_norm(features)
        unmasked_features = features.clone()
        if self.post_extract_proj is not None:
            features = self.post_extract_proj(features)

        features = self.dropout_input(features)
        unmasked_features = self.dropout_features(unmasked_features)

        x = features
        x_conv = self.pos_conv(x.transpose(1, 2))
        x_conv = x_conv.transpose(1, 2)
        x += x_conv
        if self.args.use_audio_cls_token:
            x = torch.cat([self.cls_token.repeat(x.shape[0], 1, 1), x], dim=1)

        layer_feats = self.encoder(x)
        features = layer_feats
        if self.args.use_audio_cls_token:
            cls_token = layer_feats[:, 0]
            features = features[:, 1:]
        else:
            cls_token = None
        return {"features": features, "cls_token": cls_token, "features_pen": features_pen}


def compute():
    torch.manual_seed(0)
    model = AudioEncoder(Args())
    model.train()
    wav = torch.randn(2, 1, 400)
    out = model(wav)
    target = torch.randn(2, out["cls_token"].shape[-1])
    loss = (out["cls_token"] - target).pow(2).mean() + out["features"].abs().mean() + 0.1 * out["features_pen"]
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters() if p.grad is not None}


if __name__ == "__main__":
    compute()
