# source: https://github.com/ry85/VAE-GAN/issues/1
# pattern: optimizer_step_between
# codemod_fixable: no
# error: A
# ref_semantics: differs
# VAE-GAN main.py (three optimizers in one step): one forward gives x_tilde / disc_layer / disc_class; then
# loss_encoder.backward(retain_graph=True); optimizer_encoder.step() updates the encoder in place, and
# loss_decoder.backward(retain_graph=True) -- whose graph goes back through the encoder via z -> x_tilde -- fails
# ("Code broken in backward"). Fix posted in the thread (wqzdhrdhr): run all backward passes first (zeroing the
# decoder / discriminator gradients in between as before) and only then step the three optimizers. The encoder and
# decoder then also keep the gradients of the later losses, so the update differs from the original intent.
# network.py's conv Encoder / Decoder / Discriminator are replaced by small stand-ins with the same interface;
# VaeGan.forward / reparameterize / loss and the training-step body are the repo's (CUDA and CelebA dropped; the
# equilibrium/margin switches are left at train_dec = train_dis = True).
import torch
import torch.nn as nn
from torch.autograd import Variable
from torch.optim import RMSprop


class Encoder(nn.Module):
    def __init__(self, z_size=8):
        super().__init__()
        self.size = 16
        self.net = nn.Sequential(nn.Conv2d(3, 4, 4, 2, 1), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 4 * 4, 16), nn.ReLU())
        self.l_mu = nn.Linear(16, z_size)
        self.l_var = nn.Linear(16, z_size)

    def forward(self, x):
        h = self.net(x)
        return self.l_mu(h), self.l_var(h)


class Decoder(nn.Module):
    def __init__(self, z_size=8, size=16):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(z_size, 4 * 4 * 4), nn.ReLU())
        self.deconv = nn.Sequential(nn.ConvTranspose2d(4, 3, 4, 2, 1), nn.Tanh())

    def forward(self, z):
        return self.deconv(self.fc(z).view(len(z), 4, 4, 4))


class Discriminator(nn.Module):
    def __init__(self, channel_in=3, recon_level=3):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(channel_in, 4, 4, 2, 1), nn.ReLU())
        self.fc = nn.Sequential(nn.Flatten(), nn.Linear(4 * 4 * 4, 1), nn.Sigmoid())

    def forward(self, ten_orig, ten_predicted, ten_sampled, mode='REC'):
        ten = torch.cat((ten_orig, ten_predicted, ten_sampled), 0)
        layer = self.conv(ten)
        if mode == "REC":
            return layer.view(len(layer), -1)
        return self.fc(layer)


class VaeGan(nn.Module):
    def __init__(self,z_size=128,recon_level=3):
        super(VaeGan, self).__init__()
        # latent space size
        self.z_size = z_size
        self.encoder = Encoder(z_size=self.z_size)
        self.decoder = Decoder(z_size=self.z_size, size=self.encoder.size)
        self.discriminator = Discriminator(channel_in=3,recon_level=recon_level)

    def reparameterize(self, mu, logvar):
        logvar = logvar.mul(0.5).exp_()
        eps = Variable(logvar.data.new(logvar.size()).normal_())
        return eps.mul(logvar).add_(mu)

    def forward(self, x, gen_size=10):
        mus, log_variances = self.encoder(x)
        z = self.reparameterize(mus, log_variances)
        x_tilde = self.decoder(z)

        z_p = Variable(torch.randn(len(x), self.z_size), requires_grad=True)
        x_p = self.decoder(z_p)

        disc_layer = self.discriminator(x, x_tilde, x_p, "REC")  # discriminator for reconstruction
        disc_class = self.discriminator(x, x_tilde, x_p, "GAN")

        return x_tilde, disc_class, disc_layer, mus, log_variances

    @staticmethod
    def loss(x, x_tilde, disc_layer_original, disc_layer_predicted, disc_layer_sampled, disc_class_original, disc_class_predicted, disc_class_sampled, mus, variances):

        # reconstruction error, not used for the loss but useful to evaluate quality
        nle = 0.5*(x.view(len(x), -1) - x_tilde.view(len(x_tilde), -1)) ** 2

        # kl-divergence
        kl = -0.5 * torch.sum(-variances.exp() - torch.pow(mus,2) + variances + 1, 1)

        # mse between intermediate layers
        mse = torch.sum(0.5*(disc_layer_original - disc_layer_predicted) ** 2, 1)

        # bce for decoder and discriminator for original and reconstructed
        bce_dis_original = -torch.log(disc_class_original + 1e-3)
        bce_dis_predicted = -torch.log(1 - disc_class_predicted + 1e-3)
        bce_dis_sampled = -torch.log(1 - disc_class_sampled + 1e-3)

        return nle, kl, mse, bce_dis_original, bce_dis_predicted, bce_dis_sampled


def compute():
    torch.manual_seed(0)
    lr, lambda_mse = 3e-4, 1e-6
    margin, equilibrium = 0.35, 0.68
    net = VaeGan(z_size=8, recon_level=3)
    optimizer_encoder = RMSprop(params=net.encoder.parameters(),lr=lr,alpha=0.9,eps=1e-8,weight_decay=0,momentum=0,centered=False)
    optimizer_decoder = RMSprop(params=net.decoder.parameters(),lr=lr,alpha=0.9,eps=1e-8,weight_decay=0,momentum=0,centered=False)
    optimizer_discriminator = RMSprop(params=net.discriminator.parameters(),lr=lr,alpha=0.9,eps=1e-8,weight_decay=0,momentum=0,centered=False)
    train_loader = [(torch.rand(4, 3, 8, 8) * 2 - 1, None) for _ in range(2)]
    out = {}
    for j, (x, label) in enumerate(train_loader):
        net.train()
        batch_size = len(x)

        x = Variable(x, requires_grad=False).float()

        x_tilde, disc_class, disc_layer, mus, log_variances = net(x)

        # split so we can get the different parts
        disc_layer_original = disc_layer[:batch_size]
        disc_layer_predicted = disc_layer[batch_size:-batch_size]
        disc_layer_sampled = disc_layer[-batch_size:]

        disc_class_original = disc_class[:batch_size]
        disc_class_predicted = disc_class[batch_size:-batch_size]
        disc_class_sampled = disc_class[-batch_size:]

        nle, kl, mse, bce_dis_original, bce_dis_predicted, bce_dis_sampled = VaeGan.loss(x, x_tilde, \
                                                                    disc_layer_original, disc_layer_predicted, disc_layer_sampled,
                                                                    disc_class_original, disc_class_predicted, disc_class_sampled,
                                                                    mus, log_variances)

        # THIS IS THE MOST IMPORTANT PART OF THE CODE
        loss_encoder = torch.sum(kl)+torch.sum(mse)
        loss_discriminator = torch.sum(bce_dis_original) + torch.sum(bce_dis_predicted) + torch.sum(bce_dis_sampled)
        loss_decoder = torch.sum(lambda_mse * mse) - (1.0 - lambda_mse) * loss_discriminator

        # selectively disable the decoder of the discriminator if they are unbalanced
        train_dis = True
        train_dec = True

        net.zero_grad()

        # encoder
        loss_encoder.backward(retain_graph=True)  #someone likes to clamp the grad here: [p.grad.data.clamp_(-1,1) for p in net.encoder.parameters()]
        optimizer_encoder.step()
        net.zero_grad()  # cleanothers, so they are not afflicted by encoder loss

        #decoder
        if train_dec:
            loss_decoder.backward(retain_graph=True)  #[p.grad.data.clamp_(-1,1) for p in net.decoder.parameters()]
            optimizer_decoder.step()
            net.discriminator.zero_grad()  #clean the discriminator

        #discriminator
        if train_dis:
            loss_discriminator.backward()  #[p.grad.data.clamp_(-1,1) for p in net.discriminator.parameters()]
            optimizer_discriminator.step()
        out.update({"it%d.discriminator.%s" % (j, n): p.grad.clone() for n, p in net.discriminator.named_parameters()})
    out.update({"final." + n: p.detach().clone() for n, p in net.named_parameters()})
    return out


if __name__ == "__main__":
    compute()
