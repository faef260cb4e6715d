# helper for 518: small stand-ins for BicycleGAN's models/networks.py (define_G / define_E / define_D / GANLoss)
# and models/base_model.py (set_requires_grad) with the same call signatures.
import torch
import torch.nn as nn


class BaseModel:
    def __init__(self, opt):
        self.opt = opt
        self.device = torch.device('cpu')
        self.gpu_ids = []

    def set_requires_grad(self, nets, requires_grad=False):
        if not isinstance(nets, list):
            nets = [nets]
        for net in nets:
            if net is not None:
                for param in net.parameters():
                    param.requires_grad = requires_grad


class G_Unet_add_input(nn.Module):
    def __init__(self, input_nc, output_nc, nz, ngf):
        super().__init__()
        self.nz = nz
        self.net = nn.Sequential(nn.Conv2d(input_nc + nz, ngf, 3, padding=1), nn.LeakyReLU(0.2),
                                 nn.Conv2d(ngf, output_nc, 3, padding=1), nn.Tanh())

    def forward(self, x, z=None):
        z_img = z.view(z.size(0), z.size(1), 1, 1).expand(z.size(0), z.size(1), x.size(2), x.size(3))
        return self.net(torch.cat([x, z_img], 1))


class E_ResNet(nn.Module):
    def __init__(self, input_nc, output_nc, nef, vaeLike=True):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(input_nc, nef, 4, 2, 1), nn.LeakyReLU(0.2), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(nef, output_nc)
        self.fcVar = nn.Linear(nef, output_nc)

    def forward(self, x):
        h = self.conv(x).flatten(1)
        return self.fc(h), self.fcVar(h)


class D_NLayers(nn.Module):
    def __init__(self, input_nc, ndf):
        super().__init__()
        self.model = nn.Sequential(nn.Conv2d(input_nc, ndf, 4, 2, 1), nn.LeakyReLU(0.2, True),
                                   nn.Conv2d(ndf, 1, 4, 1, 1))

    def forward(self, x):
        return [self.model(x)]


def define_G(input_nc, output_nc, nz, ngf, **kwargs):
    return G_Unet_add_input(input_nc, output_nc, nz, ngf)


def define_E(input_nc, output_nc, nef, vaeLike=True, **kwargs):
    return E_ResNet(input_nc, output_nc, nef, vaeLike)


def define_D(input_nc, ndf, **kwargs):
    return D_NLayers(input_nc, ndf)


class GANLoss(nn.Module):
    def __init__(self, gan_mode='lsgan', target_real_label=1.0, target_fake_label=0.0):
        super().__init__()
        self.register_buffer('real_label', torch.tensor(target_real_label))
        self.register_buffer('fake_label', torch.tensor(target_fake_label))
        self.loss = nn.MSELoss()

    def __call__(self, predictions, target_is_real):
        all_losses = []
        for prediction in predictions:
            target = (self.real_label if target_is_real else self.fake_label).expand_as(prediction)
            all_losses.append(self.loss(prediction, target))
        total_loss = sum(all_losses)
        return total_loss, all_losses
