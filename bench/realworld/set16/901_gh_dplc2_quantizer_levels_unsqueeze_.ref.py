# reference fix for 901: the issue's `levels = levels.unsqueeze(0)` in quantize.forward (helper _fixed).
import importlib
import math
import os
import sys

import torch
import torch.nn as nn
import torch.optim as optim

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
scalar_quantizer = importlib.import_module("901helpers_scalar_quantizer_fixed")
quantize = scalar_quantizer.quantize


# Encoder and stochastic function (B in the paper)
class _netE(nn.Module):
    def __init__(self, nc, nz, ngf, kernel=2, padding=1, img_width=64, img_height=64,
                 quant_levels=None, do_comp=False, ncenc=8):
        super(_netE, self).__init__()
        model_down_list = [
            nn.Conv2d(nc, ngf, kernel, 2, padding, bias=False),
            nn.ReLU(True),
            nn.Conv2d(ngf, ngf * 2, kernel, 2, padding, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.Conv2d(ngf * 2, ngf * 4, kernel, 2, padding, bias=False),
            nn.BatchNorm2d(ngf * 4),
            nn.ReLU(True),
            nn.Conv2d(ngf * 4, ngf * 8, kernel, 2, padding, bias=False),
            nn.BatchNorm2d(ngf * 8),
            nn.ReLU(True)
        ]
        # quantize if in compression mode
        if do_comp:
            model_down_list += [
                nn.Conv2d(ngf * 8, ncenc, 3, 1, 1, bias=True),
                quantize(quant_levels)
            ]
        self.model_down = nn.Sequential(*model_down_list)
        model_z_list = [nn.ConvTranspose2d(ncenc, ngf * 8, 3, 1, 1, bias=True)] if do_comp else []
        model_z_list += [nn.Conv2d(ngf * 8, nz, (img_height // 16, img_width // 16), 1, 0, bias=False)]
        self.model_z = nn.Sequential(*model_z_list)

    def forward(self, input):
        out_down = self.model_down(input)
        return self.model_z(out_down)


# Standard DCGAN-type generator/decoder
class _netG(nn.Module):
    def __init__(self, nc, nz, ngf, kernel=2, padding=1, output_padding=0, img_width=64, img_height=64):
        super(_netG, self).__init__()
        main_list = [nn.ConvTranspose2d(nz, ngf * 8, (img_height // 16, img_width // 16), 1, 0, bias=False),
                     nn.BatchNorm2d(ngf * 8),
                     nn.ReLU(True)]
        main_list += [
            nn.ConvTranspose2d(ngf * 8, ngf * 4, kernel, 2, padding, output_padding, bias=False),
            nn.BatchNorm2d(ngf * 4),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, kernel, 2, padding, output_padding, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, kernel, 2, padding, output_padding, bias=False),
            nn.BatchNorm2d(ngf),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf, ngf, kernel, 2, padding, output_padding, bias=False),
            nn.BatchNorm2d(ngf),
            nn.ReLU(True),
            nn.Conv2d(ngf, nc, 3, 1, 1, bias=True),
            nn.Tanh()
        ]
        self.main = nn.Sequential(*main_list)

    def forward(self, input):
        return self.main(input)


def compute():
    torch.manual_seed(0)
    nc, nz, ngf, img = 3, 16, 8, 16
    kernel, padding, output_padding = 4, 1, 0
    nquant = 2
    quant_delta = 2.0 / nquant
    quant_levels = [-1.0 + quant_delta / 2.0 + l * quant_delta for l in range(nquant)]
    netE = _netE(nc, nz, ngf, kernel, padding, img, img, quant_levels, True, ncenc=4)
    netG = _netG(nc, nz, ngf, kernel, padding, output_padding, img, img)
    optimizerEG = optim.Adam(list(netE.parameters()) + list(netG.parameters()), lr=1e-4, betas=(0.5, 0.999))
    reconstruction_loss = nn.MSELoss()

    real = torch.rand(2, nc, img, img) * 2 - 1
    netE.zero_grad()
    netG.zero_grad()
    outputE = netE(real)
    outputG = netG(outputE)
    lossEG = reconstruction_loss(outputG, real)
    lossEG.backward()
    grads = {"E." + n: p.grad.clone() for n, p in netE.named_parameters() if p.grad is not None}
    grads.update({"G." + n: p.grad.clone() for n, p in netG.named_parameters() if p.grad is not None})
    optimizerEG.step()
    return grads


if __name__ == "__main__":
    compute()
