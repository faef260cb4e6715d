# source: https://github.com/1Konny/FactorVAE/issues/15
# pattern: other
# codemod_fixable: no
# error: A
# ref_semantics: same
# FactorVAE step: D_z = D(z) is computed for the VAE's total-correlation term, the VAE is updated
# (vae_loss.backward(retain_graph=True); optim_VAE.step()), then the discriminator loss reuses D_z, whose graph
# runs back into the encoder weights that optim_VAE.step() just modified. The discriminator needs its own D(z.detach()).
import torch
import torch.nn as nn
import torch.nn.functional as F


def recon_loss(x, x_recon):
    n = x.size(0)
    loss = F.binary_cross_entropy_with_logits(x_recon, x, reduction='sum').div(n)
    return loss


def kl_divergence(mu, logvar):
    kld = -0.5*(1+logvar-mu**2-logvar.exp()).sum(1).mean()
    return kld


def permute_dims(z):
    assert z.dim() == 2

    B, _ = z.size()
    perm_z = []
    for z_j in z.split(1, 1):
        perm = torch.randperm(B).to(z.device)
        perm_z_j = z_j[perm]
        perm_z.append(perm_z_j)

    return torch.cat(perm_z, 1)


class Discriminator(nn.Module):
    def __init__(self, z_dim):
        super(Discriminator, self).__init__()
        self.z_dim = z_dim
        self.net = nn.Sequential(
            nn.Linear(z_dim, 16),
            nn.LeakyReLU(0.2, True),
            nn.Linear(16, 16),
            nn.LeakyReLU(0.2, True),
            nn.Linear(16, 2),
        )

    def forward(self, z):
        return self.net(z).squeeze()


class FactorVAE(nn.Module):
    """Encoder-decoder stand-in (MLP instead of the dSprites conv stack)."""
    def __init__(self, z_dim=4, x_dim=16):
        super(FactorVAE, self).__init__()
        self.z_dim = z_dim
        self.encode = nn.Sequential(nn.Linear(x_dim, 32), nn.ReLU(True), nn.Linear(32, 2*z_dim))
        self.decode = nn.Sequential(nn.Linear(z_dim, 32), nn.ReLU(True), nn.Linear(32, x_dim))

    def reparametrize(self, mu, logvar):
        std = logvar.mul(0.5).exp()
        eps = std.data.new(std.size()).normal_()
        return eps.mul(std).add(mu)

    def forward(self, x, no_dec=False):
        stats = self.encode(x)
        mu = stats[:, :self.z_dim]
        logvar = stats[:, self.z_dim:]
        z = self.reparametrize(mu, logvar)

        if no_dec:
            return z.squeeze()
        else:
            x_recon = self.decode(z).view(x.size())
            return x_recon, mu, logvar, z.squeeze()


def compute():
    torch.manual_seed(0)
    batch_size, gamma = 8, 6.4
    VAE, D = FactorVAE(), Discriminator(4)
    optim_VAE = torch.optim.Adam(VAE.parameters(), lr=1e-4, betas=(0.9, 0.999))
    optim_D = torch.optim.Adam(D.parameters(), lr=1e-4, betas=(0.5, 0.9))
    ones = torch.ones(batch_size, dtype=torch.long)
    zeros = torch.zeros(batch_size, dtype=torch.long)

    x_true1 = torch.rand(batch_size, 16).round()
    x_true2 = torch.rand(batch_size, 16).round()

    x_recon, mu, logvar, z = VAE(x_true1)
    vae_recon_loss = recon_loss(x_true1, x_recon)
    vae_kld = kl_divergence(mu, logvar)

    D_z = D(z)
    vae_tc_loss = (D_z[:, :1] - D_z[:, 1:]).mean()

    vae_loss = vae_recon_loss + vae_kld + gamma*vae_tc_loss

    optim_VAE.zero_grad()
    vae_loss.backward(retain_graph=True)
    grads = {'VAE.' + k: p.grad.clone() for k, p in VAE.named_parameters()}
    optim_VAE.step()

    z_prime = VAE(x_true2, no_dec=True)
    z_pperm = permute_dims(z_prime).detach()
    D_z_pperm = D(z_pperm)
    D_tc_loss = 0.5*(F.cross_entropy(D_z, zeros) + F.cross_entropy(D_z_pperm, ones))

    optim_D.zero_grad()
    D_tc_loss.backward()
    grads.update({'D.' + k: p.grad.clone() for k, p in D.named_parameters()})
    optim_D.step()
    return grads


if __name__ == "__main__":
    compute()
