# source: https://github.com/thuml/Time-Series-Library/issues/699
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# Time-Series-Library, models/TimesNet.py, Model.forecast (the "Normalization from Non-stationary Transformer"):
# `x_enc = x_enc - means`, `stdev = torch.sqrt(torch.var(x_enc, dim=1, keepdim=True, unbiased=False) + 1e-5)`,
# then `x_enc /= stdev`. torch.var saved x_enc for backward and the division overwrites it; this only fails when
# x_enc requires grad, which the reporter hit after putting a trainable layer in front of TimesNet ("[32, 96, 7]
# ... is at version 1; expected version 0"). The issue proposes `x_enc = x_enc / stdev` (also in imputation and
# anomaly_detection); a maintainer asked for a PR and merged it (#709).
# Stand-ins: the reporter's front layer is a per-channel learnable affine map (the report does not show it);
# layers.Embed.DataEmbedding is reduced to its value embedding (circular Conv1d) + sinusoidal positional embedding
# with x_mark_enc=None; Inception_Block_V1 as in layers/Conv_Blocks.py; FFT_for_Period returns Python ints
# instead of going through numpy. seq_len 16, pred_len 8, 3 channels, d_model 8, d_ff 8, top_k 2, e_layers 1.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.fft


class Inception_Block_V1(nn.Module):
    def __init__(self, in_channels, out_channels, num_kernels=6):
        super(Inception_Block_V1, self).__init__()
        self.num_kernels = num_kernels
        kernels = []
        for i in range(self.num_kernels):
            kernels.append(nn.Conv2d(in_channels, out_channels, kernel_size=2 * i + 1, padding=i))
        self.kernels = nn.ModuleList(kernels)

    def forward(self, x):
        res_list = []
        for i in range(self.num_kernels):
            res_list.append(self.kernels[i](x))
        res = torch.stack(res_list, dim=-1).mean(-1)
        return res


class DataEmbedding(nn.Module):
    """stand-in: TokenEmbedding + PositionalEmbedding of layers/Embed.py (no temporal embedding)"""

    def __init__(self, c_in, d_model, dropout=0.1):
        super(DataEmbedding, self).__init__()
        self.tokenConv = nn.Conv1d(c_in, d_model, kernel_size=3, padding=1, padding_mode='circular', bias=False)
        pe = torch.zeros(64, d_model)
        position = torch.arange(0, 64).float().unsqueeze(1)
        div_term = (torch.arange(0, d_model, 2).float() * -(math.log(10000.0) / d_model)).exp()
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer('pe', pe.unsqueeze(0))
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, x, x_mark):
        x = self.tokenConv(x.permute(0, 2, 1)).transpose(1, 2) + self.pe[:, :x.size(1)]
        return self.dropout(x)


def FFT_for_Period(x, k=2):
    # [B, T, C]
    xf = torch.fft.rfft(x, dim=1)
    # find period by amplitudes
    frequency_list = abs(xf).mean(0).mean(-1)
    frequency_list[0] = 0
    _, top_list = torch.topk(frequency_list, k)
    top_list = top_list.detach().cpu().tolist()
    period = [x.shape[1] // t for t in top_list]
    return period, abs(xf).mean(-1)[:, top_list]


class TimesBlock(nn.Module):
    def __init__(self, configs):
        super(TimesBlock, self).__init__()
        self.seq_len = configs.seq_len
        self.pred_len = configs.pred_len
        self.k = configs.top_k
        # parameter-efficient design
        self.conv = nn.Sequential(
            Inception_Block_V1(configs.d_model, configs.d_ff, num_kernels=configs.num_kernels),
            nn.GELU(),
            Inception_Block_V1(configs.d_ff, configs.d_model, num_kernels=configs.num_kernels)
        )

    def forward(self, x):
        B, T, N = x.size()
        period_list, period_weight = FFT_for_Period(x, self.k)
        res = []
        for i in range(self.k):
            period = period_list[i]
            # padding
            if (self.seq_len + self.pred_len) % period != 0:
                length = (((self.seq_len + self.pred_len) // period) + 1) * period
                padding = x[:, -(length - (self.seq_len + self.pred_len)):, :]
                out = torch.cat([x, padding], dim=1)
            else:
                length = (self.seq_len + self.pred_len)
                out = x
            # reshape
            out = out.reshape(B, length // period, period, N).permute(0, 3, 1, 2).contiguous()
            # 2D conv: from 1d Variation to 2d Variation
            out = self.conv(out)
            # reshape back
            out = out.permute(0, 2, 3, 1).reshape(B, -1, N)
            res.append(out[:, :(self.seq_len + self.pred_len), :])
        res = torch.stack(res, dim=-1)
        # adaptive aggregation
        period_weight = F.softmax(period_weight, dim=1)
        period_weight = period_weight.unsqueeze(1).unsqueeze(1).repeat(1, T, N, 1)
        res = torch.sum(res * period_weight, -1)
        # residual connection
        res = res + x
        return res


class Model(nn.Module):
    def __init__(self, configs):
        super(Model, self).__init__()
        self.configs = configs
        self.seq_len = configs.seq_len
        self.pred_len = configs.pred_len
        self.model = nn.ModuleList([TimesBlock(configs) for _ in range(configs.e_layers)])
        self.enc_embedding = DataEmbedding(configs.enc_in, configs.d_model, configs.dropout)
        self.layer = configs.e_layers
        self.layer_norm = nn.LayerNorm(configs.d_model)
        self.predict_linear = nn.Linear(self.seq_len, self.pred_len + self.seq_len)
        self.projection = nn.Linear(configs.d_model, configs.c_out, bias=True)

    def forecast(self, x_enc, x_mark_enc, x_dec, x_mark_dec):
        # Normalization from Non-stationary Transformer
        means = x_enc.mean(1, keepdim=True).detach()
        x_enc = x_enc - means
        stdev = torch.sqrt(
            torch.var(x_enc, dim=1, keepdim=True, unbiased=False) + 1e-5)
        x_enc /= stdev

        # embedding
        enc_out = self.enc_embedding(x_enc, x_mark_enc)  # [B,T,C]
        enc_out = self.predict_linear(enc_out.permute(0, 2, 1)).permute(0, 2, 1)  # align temporal dimension
        # TimesNet
        for i in range(self.layer):
            enc_out = self.layer_norm(self.model[i](enc_out))
        # porject back
        dec_out = self.projection(enc_out)

        # De-Normalization from Non-stationary Transformer
        dec_out = dec_out * (stdev[:, 0, :].unsqueeze(1).repeat(1, self.pred_len + self.seq_len, 1))
        dec_out = dec_out + (means[:, 0, :].unsqueeze(1).repeat(1, self.pred_len + self.seq_len, 1))
        return dec_out

    def forward(self, x_enc, x_mark_enc, x_dec, x_mark_dec, mask=None):
        dec_out = self.forecast(x_enc, x_mark_enc, x_dec, x_mark_dec)
        return dec_out[:, -self.pred_len:, :]  # [B, L, D]


class FrontLayer(nn.Module):
    """stand-in for the reporter's trainable layer in front of TimesNet"""

    def __init__(self, c):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(c))
        self.shift = nn.Parameter(torch.zeros(c))

    def forward(self, x):
        return x * self.scale + self.shift


class Configs:
    seq_len = 16
    pred_len = 8
    top_k = 2
    d_model = 8
    d_ff = 8
    num_kernels = 3
    e_layers = 1
    enc_in = 3
    c_out = 3
    dropout = 0.0


def compute():
    torch.manual_seed(0)
    cfg = Configs()
    front = FrontLayer(cfg.enc_in)
    model = Model(cfg)
    t = torch.arange(cfg.seq_len).float()
    x = torch.stack([torch.sin(t * 0.8 + c) for c in range(cfg.enc_in)], -1).unsqueeze(0).repeat(2, 1, 1)
    x = x + 0.1 * torch.randn_like(x)
    y = torch.randn(2, cfg.pred_len, cfg.c_out)
    out = model(front(x), None, None, None)
    loss = F.mse_loss(out, y)
    loss.backward()
    grads = {"front." + n: p.grad for n, p in front.named_parameters()}
    grads.update({n: p.grad for n, p in model.named_parameters()})
    return grads


if __name__ == "__main__":
    compute()
