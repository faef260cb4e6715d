# source: https://github.com/ando-khachatryan/HiDDeN/issues/23
# pattern: inplace_method
# codemod_fixable: yes
# error: A
# ref_semantics: same
# HiDDeN (image watermarking: Encoder -> Noiser -> Decoder) trained with the JpegCompression noise layer fails
# with "one of the variables needed for gradient computation has been modified by an inplace operation:
# [... [1, 1, 256, 256]], which is output 0 of UnsqueezeBackward1, is at version 3; expected version 2".
# JpegCompression.apply_conv (noise_layers/jpeg_compression.py, here 629helpers_hidden_jpeg_compression.py) does
# `image_yuv_ch = image[:, channel, :, :].unsqueeze_(1)` and `F.conv2d(image_yuv_ch, filters, stride=8)`; conv2d
# saves its input, and the following channels' in-place unsqueeze_ on other views of the same image bump the
# shared version counter. Fix from the thread: `F.conv2d(image_yuv_ch.clone(), filters, stride=8)` (in the helper).
# Stand-ins: HiDDenConfiguration is a SimpleNamespace with small sizes (16x16 images, 8 channels, 4-bit
# messages); the Noiser's np.random.choice among [Identity(), JpegCompression] is fixed to the JpegCompression
# layer (the failing draw); the loss is the encoder/decoder MSE part of Hidden.train_on_batch (no VGG/discriminator).
import os
import sys
from importlib import import_module
from types import SimpleNamespace

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
JPEG = "629helpers_hidden_jpeg_compression"


class ConvBNRelu(nn.Module):
    """
    Building block used in HiDDeN network. Is a sequence of Convolution, Batch Normalization, and ReLU activation
    """
    def __init__(self, channels_in, channels_out, stride=1):

        super(ConvBNRelu, self).__init__()

        self.layers = nn.Sequential(
            nn.Conv2d(channels_in, channels_out, 3, stride, padding=1),
            nn.BatchNorm2d(channels_out),
            nn.ReLU(inplace=True)
        )

    def forward(self, x):
        return self.layers(x)


class Encoder(nn.Module):
    """
    Inserts a watermark into an image.
    """
    def __init__(self, config):
        super(Encoder, self).__init__()
        self.H = config.H
        self.W = config.W
        self.conv_channels = config.encoder_channels
        self.num_blocks = config.encoder_blocks

        layers = [ConvBNRelu(3, self.conv_channels)]

        for _ in range(config.encoder_blocks-1):
            layer = ConvBNRelu(self.conv_channels, self.conv_channels)
            layers.append(layer)

        self.conv_layers = nn.Sequential(*layers)
        self.after_concat_layer = ConvBNRelu(self.conv_channels + 3 + config.message_length,
                                             self.conv_channels)

        self.final_layer = nn.Conv2d(self.conv_channels, 3, kernel_size=1)

    def forward(self, image, message):

        # First, add two dummy dimensions in the end of the message.
        # This is required for the .expand to work correctly
        expanded_message = message.unsqueeze(-1)
        expanded_message.unsqueeze_(-1)

        expanded_message = expanded_message.expand(-1,-1, self.H, self.W)
        encoded_image = self.conv_layers(image)
        # concatenate expanded message and image
        concat = torch.cat([expanded_message, encoded_image, image], dim=1)
        im_w = self.after_concat_layer(concat)
        im_w = self.final_layer(im_w)
        return im_w


class Decoder(nn.Module):
    """
    Decoder module. Receives a watermarked image and extracts the watermark.
    """
    def __init__(self, config):

        super(Decoder, self).__init__()
        self.channels = config.decoder_channels

        layers = [ConvBNRelu(3, self.channels)]
        for _ in range(config.decoder_blocks - 1):
            layers.append(ConvBNRelu(self.channels, self.channels))

        layers.append(ConvBNRelu(self.channels, config.message_length))

        layers.append(nn.AdaptiveAvgPool2d(output_size=(1, 1)))
        self.layers = nn.Sequential(*layers)

        self.linear = nn.Linear(config.message_length, config.message_length)

    def forward(self, image_with_wm):
        x = self.layers(image_with_wm)
        x.squeeze_(3).squeeze_(2)
        x = self.linear(x)
        return x


class Noiser(nn.Module):
    """Combines noise layers; the original draws one with np.random.choice (here: the JpegCompression layer)."""
    def __init__(self, noise_layers: list, device, jpeg_module):
        super(Noiser, self).__init__()
        self.noise_layers = []
        for layer in noise_layers:
            if layer == 'JpegPlaceholder':
                self.noise_layers.append(jpeg_module.JpegCompression(device))

    def forward(self, encoded_and_cover):
        random_noise_layer = self.noise_layers[-1]
        return random_noise_layer(encoded_and_cover)


class EncoderDecoder(nn.Module):
    def __init__(self, config, noiser):

        super(EncoderDecoder, self).__init__()
        self.encoder = Encoder(config)
        self.noiser = noiser

        self.decoder = Decoder(config)

    def forward(self, image, message):
        encoded_image = self.encoder(image, message)
        noised_and_cover = self.noiser([encoded_image, image])
        noised_image = noised_and_cover[0]
        decoded_message = self.decoder(noised_image)
        return encoded_image, noised_image, decoded_message


def compute():
    torch.manual_seed(0)
    jpeg = import_module(JPEG)
    device = torch.device('cpu')
    config = SimpleNamespace(H=16, W=16, message_length=4, encoder_blocks=2, encoder_channels=8,
                             decoder_blocks=2, decoder_channels=8, encoder_loss=0.7, decoder_loss=1)
    noiser = Noiser(['JpegPlaceholder'], device, jpeg)
    encoder_decoder = EncoderDecoder(config, noiser)
    mse_loss = nn.MSELoss()

    images = torch.rand(2, 3, 16, 16) * 2 - 1
    messages = torch.randint(0, 2, (2, 4)).float()
    encoded_images, noised_images, decoded_messages = encoder_decoder(images, messages)
    g_loss_enc = mse_loss(encoded_images, images)
    g_loss_dec = mse_loss(decoded_messages, messages)
    g_loss = config.encoder_loss * g_loss_enc + config.decoder_loss * g_loss_dec
    g_loss.backward()
    return {n: p.grad.clone() for n, p in encoder_decoder.named_parameters() if p.grad is not None}


if __name__ == "__main__":
    compute()
