# source: https://github.com/mattans/AgeProgression/issues/23
# pattern: other
# codemod_fixable: no
# error: A
# ref_semantics: same
# CAAE step: E/G optimizer steps first, then dz_loss_tot / di_loss_tot backpropagate through Dz(z) and
# Dimg(generated) into the E/G weights just updated in place. The thread's fix feeds the discriminators detached
# inputs for their own losses (needs restructuring, not a local rewrite).
import torch
import torch.nn as nn
import torch.nn.functional as F

NUM_Z = 8
NUM_AGES, NUM_GENDERS = 4, 2
IMG = 8


def bce_with_logits_loss(input, target):
    return F.binary_cross_entropy_with_logits(input, target)


def l1_loss(input, target):
    return F.l1_loss(input, target)


def two_sided(x):
    return 2 * (x - 0.5)


class Encoder(nn.Module):
    def __init__(self):
        super(Encoder, self).__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, 8, 4, 2, 1), nn.ReLU(), nn.Conv2d(8, 16, 4, 2, 1), nn.ReLU())
        self.fc = nn.Sequential(nn.Linear(16 * 2 * 2, NUM_Z), nn.Tanh())

    def forward(self, face):
        out = self.conv(face)
        return self.fc(out.flatten(1))


class Generator(nn.Module):
    def __init__(self):
        super(Generator, self).__init__()
        self.fc = nn.Sequential(nn.Linear(NUM_Z + NUM_AGES + NUM_GENDERS, 16 * 2 * 2), nn.ReLU())
        self.deconv = nn.Sequential(nn.ConvTranspose2d(16, 8, 4, 2, 1), nn.ReLU(),
                                    nn.ConvTranspose2d(8, 3, 4, 2, 1), nn.Tanh())

    def forward(self, z, age=None, gender=None):
        out = self.fc(z)
        return self.deconv(out.view(z.size(0), 16, 2, 2))


class DiscriminatorZ(nn.Module):
    def __init__(self):
        super(DiscriminatorZ, self).__init__()
        self.layers = nn.Sequential(nn.Linear(NUM_Z, 16), nn.BatchNorm1d(16), nn.ReLU(),
                                    nn.Linear(16, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1))

    def forward(self, z):
        return self.layers(z)


class DiscriminatorImg(nn.Module):
    def __init__(self):
        super(DiscriminatorImg, self).__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, 8, 4, 2, 1), nn.ReLU())
        self.fc = nn.Sequential(nn.Linear(8 * 4 * 4 + NUM_AGES + NUM_GENDERS, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))

    def forward(self, imgs, labels, device=None):
        out = self.conv(imgs).flatten(1)
        return self.fc(torch.cat((out, labels), 1))


class Net(object):
    def __init__(self):
        self.E = Encoder()
        self.Dz = DiscriminatorZ()
        self.Dimg = DiscriminatorImg()
        self.G = Generator()
        self.eg_optimizer = torch.optim.Adam(list(self.E.parameters()) + list(self.G.parameters()), lr=2e-4)
        self.dz_optimizer = torch.optim.Adam(self.Dz.parameters(), lr=2e-4)
        self.di_optimizer = torch.optim.Adam(self.Dimg.parameters(), lr=2e-4)
        self.device = torch.device('cpu')

    def teach_step(self, images, labels):
        z = self.E(images)

        # Input\Output Loss
        z_l = torch.cat((z, labels), 1)
        generated = self.G(z_l)
        eg_loss = l1_loss(generated, images)

        # Total Variance Regularization Loss
        reg = l1_loss(generated[:, :, :, :-1], generated[:, :, :, 1:]) + \
            l1_loss(generated[:, :, :-1, :], generated[:, :, 1:, :])
        reg_loss = 0 * reg

        # DiscriminatorZ Loss
        z_prior = two_sided(torch.rand_like(z, device=self.device))  # [-1 : 1]
        d_z_prior = self.Dz(z_prior)
        d_z = self.Dz(z)
        dz_loss_prior = bce_with_logits_loss(d_z_prior, torch.ones_like(d_z_prior))
        dz_loss = bce_with_logits_loss(d_z, torch.zeros_like(d_z))
        dz_loss_tot = (dz_loss + dz_loss_prior)

        # Encoder\DiscriminatorZ Loss
        ez_loss = 0.0001 * bce_with_logits_loss(d_z, torch.ones_like(d_z))

        # DiscriminatorImg Loss
        d_i_input = self.Dimg(images, labels, self.device)
        d_i_output = self.Dimg(generated, labels, self.device)
        di_input_loss = bce_with_logits_loss(d_i_input, torch.ones_like(d_i_input))
        di_output_loss = bce_with_logits_loss(d_i_output, torch.zeros_like(d_i_output))
        di_loss_tot = (di_input_loss + di_output_loss)

        # Generator\DiscriminatorImg Loss
        dg_loss = 0.0001 * bce_with_logits_loss(d_i_output, torch.ones_like(d_i_output))

        # Start back propagation
        grads = {}

        # Back prop on Encoder\Generator
        self.eg_optimizer.zero_grad()
        loss = eg_loss + reg_loss + ez_loss + dg_loss
        loss.backward(retain_graph=True)
        grads.update({'E.' + k: p.grad.clone() for k, p in self.E.named_parameters()})
        grads.update({'G.' + k: p.grad.clone() for k, p in self.G.named_parameters()})
        self.eg_optimizer.step()

        # Back prop on DiscriminatorZ
        self.dz_optimizer.zero_grad()
        dz_loss_tot.backward(retain_graph=True)
        grads.update({'Dz.' + k: p.grad.clone() for k, p in self.Dz.named_parameters()})
        self.dz_optimizer.step()

        # Back prop on DiscriminatorImg
        self.di_optimizer.zero_grad()
        di_loss_tot.backward()
        grads.update({'Dimg.' + k: p.grad.clone() for k, p in self.Dimg.named_parameters()})
        self.di_optimizer.step()
        return grads


def compute():
    torch.manual_seed(0)
    net = Net()
    images = torch.rand(4, 3, IMG, IMG) * 2 - 1
    ages = F.one_hot(torch.randint(0, NUM_AGES, (4,)), NUM_AGES).float()
    genders = F.one_hot(torch.randint(0, NUM_GENDERS, (4,)), NUM_GENDERS).float()
    labels = two_sided(torch.cat((ages, genders), 1))
    return net.teach_step(images, labels)


if __name__ == "__main__":
    compute()
