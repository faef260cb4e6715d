# Library module for case 2701 (original).
# facebookresearch/active-mri-acquisition, models/reconstruction.py, read at the parent of commit 3884b4c (2019-06-14).
# Written anew at small size (not copied): the names (init_func, ResnetBlock, ReconstructorNetwork and its methods
# data_consistency / embed_mask / forward), the cascade loop and the skip-connection statement follow the source; only
# the options the case uses are kept (reflect padding, transposed-convolution decoder, instance norm without affine
# parameters, mask embedding, normal(0, 0.02) init of conv weights with zero biases).
# Stand-ins: FFT / IFFT (the source's fft_utils used the removed `torch.fft(x, 2)` / `torch.ifft(x, 2)` on a trailing
# (real, imaginary) dimension; here torch.fft.fft2 / ifft2 over the two spatial dimensions, default normalisation).
import functools

import torch
import torch.nn as nn


class FFT(nn.Module):
    def forward(self, x):
        z = torch.view_as_complex(x.permute(0, 2, 3, 1).contiguous())
        return torch.view_as_real(torch.fft.fft2(z, dim=(1, 2))).permute(0, 3, 1, 2)


class IFFT(nn.Module):
    def forward(self, x):
        z = torch.view_as_complex(x.permute(0, 2, 3, 1).contiguous())
        return torch.view_as_real(torch.fft.ifft2(z, dim=(1, 2))).permute(0, 3, 1, 2)


def init_func(m):
    name = m.__class__.__name__
    if hasattr(m, 'weight') and ('Conv' in name or 'Linear' in name):
        nn.init.normal_(m.weight.data, 0.0, 0.02)
        if getattr(m, 'bias', None) is not None:
            nn.init.constant_(m.bias.data, 0.0)


class ResnetBlock(nn.Module):
    def __init__(self, dim, norm_layer, use_bias):
        super().__init__()
        self.conv_block = nn.Sequential(
            nn.ReflectionPad2d(1), nn.Conv2d(dim, dim, 3, bias=use_bias), norm_layer(dim), nn.ReLU(True),
            nn.ReflectionPad2d(1), nn.Conv2d(dim, dim, 3, bias=use_bias), norm_layer(dim),
        )

    def forward(self, x):
        return x + self.conv_block(x)


class ReconstructorNetwork(nn.Module):
    def __init__(self, number_of_encoder_input_channels=2, number_of_decoder_output_channels=3,
                 number_of_filters=128, number_of_layers_residual_bottleneck=6, number_of_cascade_blocks=3,
                 mask_embed_dim=6, n_downsampling=3, img_width=128):
        super().__init__()
        norm_layer = functools.partial(nn.InstanceNorm2d, affine=False, track_running_stats=False)
        use_bias = True
        nf = number_of_filters
        in_ch = number_of_encoder_input_channels + mask_embed_dim
        self.use_mask_embedding = mask_embed_dim > 0
        self.encoders_all_cascade_blocks = nn.ModuleList()
        self.residual_bottlenecks_all_cascade_blocks = nn.ModuleList()
        self.decoders_all_cascade_blocks = nn.ModuleList()
        for _ in range(number_of_cascade_blocks):
            enc = [nn.ReflectionPad2d(1), nn.Conv2d(in_ch, nf, 3, stride=2, bias=use_bias), norm_layer(nf),
                   nn.ReLU(True)]
            for i in range(1, n_downsampling):
                c = nf * 2 ** i
                enc += [nn.ReflectionPad2d(1), nn.Conv2d(c // 2, c, 3, stride=2, bias=use_bias), norm_layer(c),
                        nn.ReLU(True)]
            self.encoders_all_cascade_blocks.append(nn.Sequential(*enc))
            width = nf * 2 ** (n_downsampling - 1)
            self.residual_bottlenecks_all_cascade_blocks.append(nn.Sequential(
                *[ResnetBlock(width, norm_layer, use_bias) for _ in range(number_of_layers_residual_bottleneck)]))
            dec = []
            for i in range(n_downsampling):
                c = nf * 2 ** (n_downsampling - 1 - i)
                dec += [nn.ConvTranspose2d(c, c // 2, 4, stride=2, padding=1, bias=use_bias), norm_layer(c // 2),
                        nn.ReLU(True)]
            dec += [nn.Conv2d(nf // 2, number_of_decoder_output_channels, 1, bias=False)]
            self.decoders_all_cascade_blocks.append(nn.Sequential(*dec))
        if self.use_mask_embedding:
            self.mask_embedding_layer = nn.Sequential(nn.Conv2d(img_width, mask_embed_dim, 1, 1))
        self.IFFT = IFFT()
        self.FFT = FFT()
        self.apply(init_func)

    def data_consistency(self, x, input, mask):
        return self.IFFT((1 - mask) * self.FFT(x)) + input

    def embed_mask(self, mask):
        b, _, _, w = mask.shape
        return self.mask_embedding_layer(mask.view(b, w, 1, 1))

    def forward(self, zero_filled_input, mask):
        mask_embedding = self.embed_mask(mask)
        mask_embedding = mask_embedding.repeat(1, 1, zero_filled_input.shape[2], zero_filled_input.shape[3])
        encoder_input = torch.cat([zero_filled_input, mask_embedding], 1)
        blocks = zip(self.encoders_all_cascade_blocks, self.residual_bottlenecks_all_cascade_blocks,
                     self.decoders_all_cascade_blocks)
        for cascade_block, (encoder, residual_bottleneck, decoder) in enumerate(blocks):
            encoder_output = encoder(encoder_input)
            if cascade_block > 0:
                encoder_output += residual_bottleneck_output  # skip connection from the previous block

            residual_bottleneck_output = residual_bottleneck(encoder_output)
            decoder_output = decoder(residual_bottleneck_output)
            reconstructed_image = self.data_consistency(decoder_output[:, :-1, :, :], zero_filled_input, mask)
            uncertainty_map = decoder_output[:, -1:, :, :]
            encoder_input = torch.cat([reconstructed_image, mask_embedding], 1)
        return reconstructed_image, uncertainty_map, mask_embedding
