# Library module for case 3207 (original): ai2cm/ace, fme/downscaling/modules/video_modules.py at the parent of commit
# 70315380b ("Fix DDP in-place buffer error in FIRBlur under two-pass consistency loss", 2026-07-02). Written anew at
# small size. FIRBlur (a fixed binomial kernel registered as a buffer; forward convolves with
# `w = self.kernel.expand(c, 1, 1, 3, 3)`, a view of the buffer that conv3d saves for its backward: the statement
# at fault), _resize_spatial, PeriodicConv3d and VideoEDMPrecond (EDM preconditioning with a `sigma_data` buffer)
# follow the source; VideoUNet keeps the source's skeleton (in_conv, encoder blocks with the blur before each
# down-sampling, a middle block, decoder blocks fed `torch.cat([_resize_spatial(h, skip.shape[-2:], self.blur),
# skip])`, out_norm / out_conv).
# Stand-ins: ResBlock is a GroupNorm-SiLU-PeriodicConv3d residual block without the AdaGN noise conditioning; the
# spatial / temporal attention blocks, the noise embedding and the calendar embedding are left out (VideoUNet.forward
# still takes c_noise and the calendar arguments, unused); one block per level, channel_mult (1, 2).
import torch
import torch.nn as nn
import torch.nn.functional as F


def _groups(ch):
    return 2 if ch % 2 == 0 else 1


class PeriodicConv3d(nn.Module):
    """Per-frame spatial Conv3d, periodic in longitude (W) and zero-padded in latitude (H)."""

    def __init__(self, in_ch, out_ch, kernel=(1, 3, 3), stride=(1, 1, 1)):
        super().__init__()
        self.ph = kernel[1] // 2
        self.pw = kernel[2] // 2
        self.conv = nn.Conv3d(in_ch, out_ch, kernel, stride=stride, padding=0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.pw:
            x = torch.cat([x[..., -self.pw:], x, x[..., : self.pw]], dim=-1)
        if self.ph:
            x = F.pad(x, (0, 0, self.ph, self.ph))
        return self.conv(x)


class ResBlock(nn.Module):
    def __init__(self, in_ch, out_ch, emb_dim):
        super().__init__()
        self.norm = nn.GroupNorm(_groups(in_ch), in_ch)
        self.conv = PeriodicConv3d(in_ch, out_ch)
        self.skip = nn.Conv3d(in_ch, out_ch, 1) if in_ch != out_ch else nn.Identity()

    def forward(self, x, emb):
        return (self.skip(x) + self.conv(F.silu(self.norm(x)))) / 2 ** 0.5


class FIRBlur(nn.Module):
    """Depthwise binomial (FIR) low-pass applied per frame, periodic in longitude.

    Anti-aliases before down-sampling and smooths after up-sampling. The kernel
    is a fixed constant buffer, so it is identical on every rank (DDP-safe).
    """

    def __init__(self):
        super().__init__()
        f = torch.tensor([1.0, 2.0, 1.0])
        k = torch.outer(f, f)
        self.register_buffer("kernel", (k / k.sum())[None, None, None])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = x.shape[1]
        w = self.kernel.expand(c, 1, 1, 3, 3)
        x = torch.cat([x[..., -1:], x, x[..., :1]], dim=-1)
        x = F.pad(x, (0, 0, 1, 1))
        return F.conv3d(x, w, groups=c)


def _resize_spatial(x: torch.Tensor, size, blur=None) -> torch.Tensor:
    """Resize the (H, W) of a (B, C, T, H, W) tensor to ``size`` (keeps T), with
    an optional FIR low-pass applied only when the size actually changes.
    """
    if tuple(x.shape[-2:]) == tuple(size):
        return x
    x = F.interpolate(x, size=(x.shape[2], size[0], size[1]), mode="nearest")
    return blur(x) if blur is not None else x


class VideoUNet(nn.Module):
    def __init__(self, in_channels, out_channels, model_channels=4, channel_mult=(1, 2), num_blocks=1):
        super().__init__()
        self.levels = len(channel_mult)
        self.num_blocks = num_blocks
        emb_dim = model_channels
        self.blur = FIRBlur()
        chs = [model_channels * m for m in channel_mult]

        self.in_conv = PeriodicConv3d(in_channels, chs[0])

        self.enc_blocks = nn.ModuleList()
        self.downsamples = nn.ModuleList()
        skip_ch = [chs[0]]
        ch = chs[0]
        for level in range(self.levels):
            for _ in range(num_blocks):
                self.enc_blocks.append(ResBlock(ch, chs[level], emb_dim))
                ch = chs[level]
                skip_ch.append(ch)
            if level < self.levels - 1:
                self.downsamples.append(PeriodicConv3d(ch, ch, (1, 3, 3), stride=(1, 2, 2)))
                skip_ch.append(ch)

        self.mid_block1 = ResBlock(ch, ch, emb_dim)
        self.mid_block2 = ResBlock(ch, ch, emb_dim)

        self.dec_blocks = nn.ModuleList()
        for level in reversed(range(self.levels)):
            for _ in range(num_blocks + 1):
                sch = skip_ch.pop()
                self.dec_blocks.append(ResBlock(ch + sch, chs[level], emb_dim))
                ch = chs[level]

        self.out_norm = nn.GroupNorm(_groups(ch), ch)
        self.out_conv = PeriodicConv3d(ch, out_channels)

    def forward(self, x, c_noise, day_of_year, second_of_day, lon):
        emb = None
        h = self.in_conv(x)

        skips = [h]
        idx = 0
        for level in range(self.levels):
            for _ in range(self.num_blocks):
                h = self.enc_blocks[idx](h, emb)
                skips.append(h)
                idx += 1
            if level < self.levels - 1:
                h = self.downsamples[level](self.blur(h))
                skips.append(h)

        h = self.mid_block2(self.mid_block1(h, emb), emb)

        for idx in range(len(self.dec_blocks)):
            skip = skips.pop()
            h = torch.cat([_resize_spatial(h, skip.shape[-2:], self.blur), skip], dim=1)
            h = self.dec_blocks[idx](h, emb)

        return self.out_conv(F.silu(self.out_norm(h)))


class VideoEDMPrecond(nn.Module):
    """EDM preconditioning (Karras 2022) for the 5-D video tensor."""

    def __init__(self, model, sigma_data=1.0):
        super().__init__()
        self.model = model
        if not torch.is_tensor(sigma_data):
            sigma_data = torch.tensor([float(sigma_data)])
        self.register_buffer("sigma_data", sigma_data.reshape(1, -1, 1, 1, 1))

    def forward(self, x, condition, sigma, day_of_year, second_of_day, lon):
        x = x.to(torch.float32)
        sigma = sigma.to(torch.float32)
        if sigma.dim() == 1:
            sigma = sigma.reshape(-1, 1, 1, 1, 1)
        else:
            sigma = sigma.reshape(*sigma.shape[:2], 1, 1, 1)
        c_skip = self.sigma_data**2 / (sigma**2 + self.sigma_data**2)
        c_out = sigma * self.sigma_data / (sigma**2 + self.sigma_data**2).sqrt()
        c_in = 1 / (self.sigma_data**2 + sigma**2).sqrt()
        if sigma.shape[1] == 1:
            c_noise = (sigma.log() / 4).flatten()
        else:
            c_noise = sigma.log().mean(dim=1).flatten() / 4

        arg = c_in * x
        sigma_features = (sigma.log() / 4).expand(
            x.shape[0], x.shape[1], x.shape[2], x.shape[3], x.shape[4]
        )
        if condition is not None:
            arg = torch.cat([arg, condition, sigma_features], dim=1)
        else:
            arg = torch.cat([arg, sigma_features], dim=1)
        f_x = self.model(arg, c_noise, day_of_year, second_of_day, lon)
        return c_skip * x + c_out * f_x
