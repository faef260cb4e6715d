# reference fix for 605 (answer in the thread): inplace=True removed from LeakyReLU and Dropout in G and D
# MNIST is replaced by random images; the training loop is one D step and one G step of the notebook's loop.
import torch
import torch.nn as nn
from torch.optim import Adam


class Generator(nn.Module):

    def __init__(self):
        super(Generator, self).__init__()
        self.main = nn.Sequential(
            nn.Linear(in_features=100, out_features=256),
            nn.LeakyReLU(0.2),
            nn.Linear(in_features=256, out_features=512),
            nn.LeakyReLU(0.2),
            nn.Linear(in_features=512, out_features=1024),
            nn.LeakyReLU(0.2),
            nn.Linear(in_features=1024, out_features=28 * 28),
            nn.Tanh())

    def forward(self, inputs):
        return self.main(inputs).view(-1, 1, 28, 28)


class Discriminator(nn.Module):

    def __init__(self):
        super(Discriminator, self).__init__()
        self.main = nn.Sequential(
            nn.Linear(in_features=28 * 28, out_features=1024),
            nn.LeakyReLU(0.2),
            nn.Dropout(),
            nn.Linear(in_features=1024, out_features=512),
            nn.LeakyReLU(0.2),
            nn.Dropout(),
            nn.Linear(in_features=512, out_features=256),
            nn.LeakyReLU(0.2),
            nn.Dropout(),
            nn.Linear(in_features=256, out_features=1),
            nn.Sigmoid())

    def forward(self, inputs):
        inputs = inputs.view(-1, 28 * 28)
        return self.main(inputs)


def compute():
    torch.manual_seed(0)
    G = Generator()
    D = Discriminator()
    criterion = nn.BCELoss()
    G_optimizer = Adam(G.parameters(), lr=0.0002, betas=(0.5, 0.999))
    D_optimizer = Adam(D.parameters(), lr=0.0002, betas=(0.5, 0.999))

    batch_size = 4
    real_data = torch.rand(batch_size, 1, 28, 28) * 2 - 1
    target_real = torch.ones(batch_size, 1)
    target_fake = torch.zeros(batch_size, 1)

    D_result_from_real = D(real_data)
    D_loss_real = criterion(D_result_from_real, target_real)
    z = torch.randn((batch_size, 100))
    fake_data = G(z)
    D_result_from_fake = D(fake_data)
    D_loss_fake = criterion(D_result_from_fake, target_fake)
    D_loss = D_loss_real + D_loss_fake
    D.zero_grad()
    D_loss.backward()
    grads = {"D." + n: p.grad.clone() for n, p in D.named_parameters()}
    D_optimizer.step()

    z = torch.randn((batch_size, 100))
    fake_data = G(z)
    D_result_from_fake = D(fake_data)
    G_loss = criterion(D_result_from_fake, target_real)
    G.zero_grad()
    G_loss.backward()
    grads.update({"G." + n: p.grad.clone() for n, p in G.named_parameters()})
    G_optimizer.step()
    return grads


if __name__ == "__main__":
    compute()
