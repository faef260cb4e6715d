# source: https://github.com/tamarott/SinGAN/issues/148
# pattern: optimizer_step_between
# codemod_fixable: no
# error: A
# ref_semantics: differs
# SinGAN training.py, train_single_scale: the discriminator loop ends with `fake = netG(noise.detach(), prev)`, then
# the generator loop runs `opt.Gsteps` (3) times `output = netD(fake); errG = -output.mean();
# errG.backward(retain_graph=True); ...; optimizerG.step()` on that same `fake`. From the second G step on, backward
# goes through the graph of `fake`, whose convolutions saved netG's weights, and optimizerG.step() has changed them
# in place: "[torch.FloatTensor [3, 32, 3, 3]] is at version 2; expected version 1" (torch >= 1.5). Issue #148
# explains this and proposes the one-line fix discussed with PR #117: produce a new fake with the current netG at
# the start of every G step (`fake = netG(noise.detach(), prev)` inside the generator loop). That re-runs the forward
# after each step, so it computes something else than the original would have (ref_semantics: differs).
# Stand-ins: one scale (no coarser generators: prev and z_prev are zeros, as at the coarsest scale), 8x8 real image,
# nfc 8, 3 layers, 2 outer iterations; the reconstruction loss with alpha=10 kept; calc_gradient_penalty as in
# SinGAN/functions.py.
import torch
import torch.nn as nn
import torch.optim as optim


class ConvBlock(nn.Sequential):
    def __init__(self, in_channel, out_channel, ker_size, padd, stride):
        super(ConvBlock, self).__init__()
        self.add_module('conv', nn.Conv2d(in_channel, out_channel, kernel_size=ker_size, stride=stride, padding=padd)),
        self.add_module('norm', nn.BatchNorm2d(out_channel)),
        self.add_module('LeakyRelu', nn.LeakyReLU(0.2, inplace=True))


class WDiscriminator(nn.Module):
    def __init__(self, opt):
        super(WDiscriminator, self).__init__()
        N = int(opt.nfc)
        self.head = ConvBlock(opt.nc_im, N, opt.ker_size, opt.padd_size, 1)
        self.body = nn.Sequential()
        for i in range(opt.num_layer - 2):
            block = ConvBlock(N, N, opt.ker_size, opt.padd_size, 1)
            self.body.add_module('block%d' % (i + 1), block)
        self.tail = nn.Conv2d(N, 1, kernel_size=opt.ker_size, stride=1, padding=opt.padd_size)

    def forward(self, x):
        x = self.head(x)
        x = self.body(x)
        x = self.tail(x)
        return x


class GeneratorConcatSkip2CleanAdd(nn.Module):
    def __init__(self, opt):
        super(GeneratorConcatSkip2CleanAdd, self).__init__()
        N = opt.nfc
        self.head = ConvBlock(opt.nc_im, N, opt.ker_size, opt.padd_size, 1)
        self.body = nn.Sequential()
        for i in range(opt.num_layer - 2):
            block = ConvBlock(N, N, opt.ker_size, opt.padd_size, 1)
            self.body.add_module('block%d' % (i + 1), block)
        self.tail = nn.Sequential(
            nn.Conv2d(N, opt.nc_im, kernel_size=opt.ker_size, stride=1, padding=opt.padd_size),
            nn.Tanh()
        )

    def forward(self, x, y):
        x = self.head(x)
        x = self.body(x)
        x = self.tail(x)
        ind = int((y.shape[2] - x.shape[2]) / 2)
        y = y[:, :, ind:(y.shape[2] - ind), ind:(y.shape[3] - ind)]
        return x + y


def calc_gradient_penalty(netD, real_data, fake_data, LAMBDA):
    alpha = torch.rand(1, 1)
    alpha = alpha.expand(real_data.size())
    interpolates = alpha * real_data + ((1 - alpha) * fake_data)
    interpolates = torch.autograd.Variable(interpolates, requires_grad=True)
    disc_interpolates = netD(interpolates)
    gradients = torch.autograd.grad(outputs=disc_interpolates, inputs=interpolates,
                                    grad_outputs=torch.ones(disc_interpolates.size()),
                                    create_graph=True, retain_graph=True, only_inputs=True)[0]
    gradient_penalty = ((gradients.norm(2, dim=1) - 1) ** 2).mean() * LAMBDA
    return gradient_penalty


class Opt:
    nc_im = 3
    nc_z = 3
    nfc = 8
    ker_size = 3
    padd_size = 0
    num_layer = 3
    lr_g = 0.0005
    lr_d = 0.0005
    beta1 = 0.5
    Dsteps = 3
    Gsteps = 3
    lambda_grad = 0.1
    alpha = 10
    niter = 2
    noise_amp = 1.0


def train_single_scale(netD, netG, real, opt):
    pad = int(((opt.ker_size - 1) * opt.num_layer) / 2)
    m_noise = nn.ZeroPad2d(pad)
    m_image = nn.ZeroPad2d(pad)
    nzx, nzy = real.shape[2], real.shape[3]
    z_opt = m_noise(torch.randn(1, opt.nc_z, nzx, nzy))
    optimizerD = optim.Adam(netD.parameters(), lr=opt.lr_d, betas=(opt.beta1, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=opt.lr_g, betas=(opt.beta1, 0.999))
    for epoch in range(opt.niter):
        noise_ = m_noise(torch.randn(1, opt.nc_z, nzx, nzy))
        ############################
        # (1) Update D network: maximize D(x) + D(G(z))
        ###########################
        for j in range(opt.Dsteps):
            netD.zero_grad()
            output = netD(real)
            errD_real = -output.mean()
            errD_real.backward(retain_graph=True)
            prev = m_image(torch.zeros_like(real))
            z_prev = m_image(torch.zeros_like(real))
            noise = noise_
            fake = netG(noise.detach(), prev)
            output = netD(fake.detach())
            errD_fake = output.mean()
            errD_fake.backward(retain_graph=True)
            gradient_penalty = calc_gradient_penalty(netD, real, fake, opt.lambda_grad)
            gradient_penalty.backward()
            optimizerD.step()
        ############################
        # (2) Update G network: maximize D(G(z))
        ###########################
        for j in range(opt.Gsteps):
            netG.zero_grad()
            output = netD(fake)
            errG = -output.mean()
            errG.backward(retain_graph=True)
            if opt.alpha != 0:
                loss = nn.MSELoss()
                Z_opt = opt.noise_amp * z_opt + z_prev
                rec_loss = opt.alpha * loss(netG(Z_opt.detach(), z_prev), real)
                rec_loss.backward(retain_graph=True)
            optimizerG.step()


def compute():
    torch.manual_seed(0)
    opt = Opt()
    netD = WDiscriminator(opt)
    netG = GeneratorConcatSkip2CleanAdd(opt)
    real = torch.rand(1, 3, 8, 8) * 2 - 1
    train_single_scale(netD, netG, real, opt)
    out = {"G." + n: p.detach().clone() for n, p in netG.named_parameters()}
    out.update({"D." + n: p.detach().clone() for n, p in netD.named_parameters()})
    return out


if __name__ == "__main__":
    compute()
