# reference fix for 606 (the fix posted in the issue): after optimizer_d.step(), forward G, E and D again and
# build loss_ge from the new outputs (differs: new z and the updated D).
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim
from torch.autograd import Variable


class Discriminator(nn.Module):
    def __init__(self, z_dim=32, wasserstein=False):
        super(Discriminator, self).__init__()
        self.wass = wasserstein

        self.conv1x = nn.Conv2d(3, 32, 5, stride=1, bias=False)
        self.conv2x = nn.Conv2d(32, 64, 4, stride=2, bias=False)
        self.bn2x = nn.BatchNorm2d(64)
        self.conv3x = nn.Conv2d(64, 128, 4, stride=1, bias=False)
        self.bn3x = nn.BatchNorm2d(128)
        self.conv4x = nn.Conv2d(128, 256, 4, stride=2, bias=False)
        self.bn4x = nn.BatchNorm2d(256)
        self.conv5x = nn.Conv2d(256, 512, 4, stride=1, bias=False)
        self.bn5x = nn.BatchNorm2d(512)

        self.conv1z = nn.Conv2d(z_dim, 512, 1, stride=1, bias=False)
        self.conv2z = nn.Conv2d(512, 512, 1, stride=1, bias=False)

        self.conv1xz = nn.Conv2d(1024, 1024, 1, stride=1, bias=False)
        self.conv2xz = nn.Conv2d(1024, 1024, 1, stride=1, bias=False)
        self.conv3xz = nn.Conv2d(1024, 1, 1, stride=1, bias=True)

    def inf_x(self, x):
        x = F.dropout2d(F.leaky_relu(self.conv1x(x), negative_slope=0.1), 0.2)
        x = F.dropout2d(F.leaky_relu(self.bn2x(self.conv2x(x)), negative_slope=0.1), 0.2)
        x = F.dropout2d(F.leaky_relu(self.bn3x(self.conv3x(x)), negative_slope=0.1), 0.2)
        x = F.dropout2d(F.leaky_relu(self.bn4x(self.conv4x(x)), negative_slope=0.1), 0.2)
        x = F.dropout2d(F.leaky_relu(self.bn5x(self.conv5x(x)), negative_slope=0.1), 0.2)
        return x

    def inf_z(self, z):
        z = F.dropout2d(F.leaky_relu(self.conv1z(z), negative_slope=0.1), 0.2)
        z = F.dropout2d(F.leaky_relu(self.conv2z(z), negative_slope=0.1), 0.2)
        return z

    def inf_xz(self, xz):
        xz = F.dropout(F.leaky_relu(self.conv1xz(xz), negative_slope=0.1), 0.2)
        xz = F.dropout(F.leaky_relu(self.conv2xz(xz), negative_slope=0.1), 0.2)
        return self.conv3xz(xz)

    def forward(self, x, z):
        x = self.inf_x(x)
        z = self.inf_z(z)
        xz = torch.cat((x, z), dim=1)
        out = self.inf_xz(xz)
        if self.wass:
            return out
        else:
            return torch.sigmoid(out)


class Generator(nn.Module):
    def __init__(self, z_dim=32):
        super(Generator, self).__init__()
        self.z_dim = z_dim

        self.output_bias = nn.Parameter(torch.zeros(3, 32, 32), requires_grad=True)
        self.deconv1 = nn.ConvTranspose2d(z_dim, 256, 4, stride=1, bias=False)
        self.bn1 = nn.BatchNorm2d(256)
        self.deconv2 = nn.ConvTranspose2d(256, 128, 4, stride=2, bias=False)
        self.bn2 = nn.BatchNorm2d(128)
        self.deconv3 = nn.ConvTranspose2d(128, 64, 4, stride=1, bias=False)
        self.bn3 = nn.BatchNorm2d(64)
        self.deconv4 = nn.ConvTranspose2d(64, 32, 4, stride=2, bias=False)
        self.bn4 = nn.BatchNorm2d(32)
        self.deconv5 = nn.ConvTranspose2d(32, 32, 5, stride=1, bias=False)
        self.bn5 = nn.BatchNorm2d(32)
        self.deconv6 = nn.Conv2d(32, 3, 1, stride=1, bias=True)

    def forward(self, z):
        z = F.leaky_relu(self.bn1(self.deconv1(z)), negative_slope=0.1)
        z = F.leaky_relu(self.bn2(self.deconv2(z)), negative_slope=0.1)
        z = F.leaky_relu(self.bn3(self.deconv3(z)), negative_slope=0.1)
        z = F.leaky_relu(self.bn4(self.deconv4(z)), negative_slope=0.1)
        z = F.leaky_relu(self.bn5(self.deconv5(z)), negative_slope=0.1)
        return torch.tanh(self.deconv6(z) + self.output_bias)


class Encoder(nn.Module):
    def __init__(self, z_dim=32):
        super(Encoder, self).__init__()
        self.z_dim = z_dim
        self.conv1 = nn.Conv2d(3, 32, 5, stride=1, bias=False)
        self.bn1 = nn.BatchNorm2d(32)
        self.conv2 = nn.Conv2d(32, 64, 4, stride=2, bias=False)
        self.bn2 = nn.BatchNorm2d(64)
        self.conv3 = nn.Conv2d(64, 128, 4, stride=1, bias=False)
        self.bn3 = nn.BatchNorm2d(128)
        self.conv4 = nn.Conv2d(128, 256, 4, stride=2, bias=False)
        self.bn4 = nn.BatchNorm2d(256)
        self.conv5 = nn.Conv2d(256, 512, 4, stride=1, bias=False)
        self.bn5 = nn.BatchNorm2d(512)
        self.conv6 = nn.Conv2d(512, 512, 1, stride=1, bias=False)
        self.bn6 = nn.BatchNorm2d(512)
        self.bn7 = nn.Conv2d(512, z_dim * 2, 1, stride=1, bias=True)

    def reparameterize(self, z):
        z = z.view(z.size(0), -1)
        mu, log_sigma = z[:, :self.z_dim], z[:, self.z_dim:]
        std = torch.exp(log_sigma)
        eps = torch.randn_like(std)
        return mu + eps * std

    def forward(self, x):
        x = F.leaky_relu(self.bn1(self.conv1(x)), negative_slope=0.1)
        x = F.leaky_relu(self.bn2(self.conv2(x)), negative_slope=0.1)
        x = F.leaky_relu(self.bn3(self.conv3(x)), negative_slope=0.1)
        x = F.leaky_relu(self.bn4(self.conv4(x)), negative_slope=0.1)
        x = F.leaky_relu(self.bn5(self.conv5(x)), negative_slope=0.1)
        x = F.leaky_relu(self.bn6(self.conv6(x)), negative_slope=0.1)
        z = self.reparameterize(self.bn7(x))
        return z.view(x.size(0), self.z_dim, 1, 1)


def compute():
    torch.manual_seed(0)
    latent_dim, num_epochs, epoch, lr_adam = 32, 200, 0, 1e-4
    G, E, D = Generator(latent_dim), Encoder(latent_dim), Discriminator(latent_dim, False)
    optimizer_ge = optim.Adam(list(G.parameters()) + list(E.parameters()), lr=lr_adam)
    optimizer_d = optim.Adam(D.parameters(), lr=lr_adam)
    criterion = nn.BCELoss()

    x = torch.rand(2, 3, 32, 32) * 2 - 1
    y_true = Variable(torch.ones((x.size(0), 1)))
    y_fake = Variable(torch.zeros((x.size(0), 1)))
    noise1 = Variable(torch.Tensor(x.size()).normal_(0, 0.1 * (num_epochs - epoch) / num_epochs), requires_grad=False)
    noise2 = Variable(torch.Tensor(x.size()).normal_(0, 0.1 * (num_epochs - epoch) / num_epochs), requires_grad=False)

    optimizer_d.zero_grad()
    optimizer_ge.zero_grad()

    z_fake = Variable(torch.randn((x.size(0), latent_dim, 1, 1)), requires_grad=False)
    x_fake = G(z_fake)
    x_true = x.float()
    z_true = E(x_true)
    out_true = D(x_true + noise1, z_true)
    out_fake = D(x_fake + noise2, z_fake)

    loss_d = criterion(out_true.view(-1, 1), y_true) + criterion(out_fake.view(-1, 1), y_fake)

    loss_d.backward()
    grads = {"D." + n: p.grad.clone() for n, p in D.named_parameters()}
    optimizer_d.step()

    # Cleaning gradients.
    optimizer_ge.zero_grad()

    # Generator, Encoder and Discriminator again, with the updated D
    z_fake = Variable(torch.randn((x.size(0), latent_dim, 1, 1)), requires_grad=False)
    x_fake = G(z_fake)
    x_true = x.float()
    z_true = E(x_true)
    out_true = D(x_true + noise1, z_true)
    out_fake = D(x_fake + noise2, z_fake)

    loss_ge = criterion(out_fake.view(-1, 1), y_true) + criterion(out_true.view(-1, 1), y_fake)
    loss_ge.backward()
    grads.update({"G." + n: p.grad.clone() for n, p in G.named_parameters()})
    grads.update({"E." + n: p.grad.clone() for n, p in E.named_parameters() if p.grad is not None})
    optimizer_ge.step()
    return grads


if __name__ == "__main__":
    compute()
