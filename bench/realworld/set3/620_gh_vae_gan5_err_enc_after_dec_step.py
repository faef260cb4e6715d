# source: https://github.com/hui-po-wang/Pytorch-VAE-GAN/issues/5
# pattern: optimizer_step_between
# codemod_fixable: no
# error: A
# ref_semantics: same
# VAE-GAN notebook (VAE-GAN.ipynb): one forward gives rec_enc = G(x); the decoder loss err_dec (feature-matching
# rec_loss + GAN loss) is backpropagated and `opt_dec.step()` updates the decoder's weights in place; then
# `err_enc = prior_loss + beta * rec_loss` is backpropagated through the same rec_loss graph, i.e. through the
# decoder's old ConvTranspose weights -> "[32, 3, 5, 5] is at version 2; expected version 1" (deconv4.weight).
# The issue has no answer; the ref is the usual restructuring: take both backward passes before the steps, the
# encoder's restricted to the encoder parameters (`inputs=`) so the decoder's update keeps only err_dec's gradient.
# Channel widths are scaled down (64/2048-wide layers -> 4..32) and CelebA is replaced by random 64x64 images; one
# training iteration of the notebook's loop is run on CPU.
import torch
import torch.nn as nn
import torch.optim as optim
from torch.autograd import Variable

W = 8  # width divisor for the notebook's layer sizes


class Encoder(nn.Module):
    def __init__(self, input_channels, output_channels, representation_size=64 // W):
        super(Encoder, self).__init__()
        self.input_channels = input_channels
        self.output_channels = output_channels
        self.features = nn.Sequential(
            nn.Conv2d(self.input_channels, representation_size, 5, stride=2, padding=2),
            nn.BatchNorm2d(representation_size),
            nn.ReLU(),
            nn.Conv2d(representation_size, representation_size * 2, 5, stride=2, padding=2),
            nn.BatchNorm2d(representation_size * 2),
            nn.ReLU(),
            nn.Conv2d(representation_size * 2, representation_size * 4, 5, stride=2, padding=2),
            nn.BatchNorm2d(representation_size * 4),
            nn.ReLU())
        self.mean = nn.Sequential(
            nn.Linear(representation_size * 4 * 8 * 8, 2048 // 64),
            nn.BatchNorm1d(2048 // 64),
            nn.ReLU(),
            nn.Linear(2048 // 64, output_channels))
        self.logvar = nn.Sequential(
            nn.Linear(representation_size * 4 * 8 * 8, 2048 // 64),
            nn.BatchNorm1d(2048 // 64),
            nn.ReLU(),
            nn.Linear(2048 // 64, output_channels))

    def forward(self, x):
        batch_size = x.size()[0]
        hidden_representation = self.features(x)
        mean = self.mean(hidden_representation.view(batch_size, -1))
        logvar = self.logvar(hidden_representation.view(batch_size, -1))
        return mean, logvar


class Decoder(nn.Module):
    def __init__(self, input_size, representation_size):
        super(Decoder, self).__init__()
        self.input_size = input_size
        self.representation_size = representation_size
        dim = representation_size[0] * representation_size[1] * representation_size[2]
        self.preprocess = nn.Sequential(
            nn.Linear(input_size, dim),
            nn.BatchNorm1d(dim),
            nn.ReLU())
        self.deconv1 = nn.ConvTranspose2d(representation_size[0], 256 // W, 5, stride=2, padding=2)
        self.act1 = nn.Sequential(nn.BatchNorm2d(256 // W), nn.ReLU())
        self.deconv2 = nn.ConvTranspose2d(256 // W, 128 // W, 5, stride=2, padding=2)
        self.act2 = nn.Sequential(nn.BatchNorm2d(128 // W), nn.ReLU())
        self.deconv3 = nn.ConvTranspose2d(128 // W, 32 // W, 5, stride=2, padding=2)
        self.act3 = nn.Sequential(nn.BatchNorm2d(32 // W), nn.ReLU())
        self.deconv4 = nn.ConvTranspose2d(32 // W, 3, 5, stride=1, padding=2)
        self.activation = nn.Tanh()

    def forward(self, code):
        bs = code.size()[0]
        preprocessed_codes = self.preprocess(code)
        preprocessed_codes = preprocessed_codes.view(-1, self.representation_size[0], self.representation_size[1],
                                                     self.representation_size[2])
        output = self.deconv1(preprocessed_codes, output_size=(bs, 256 // W, 16, 16))
        output = self.act1(output)
        output = self.deconv2(output, output_size=(bs, 128 // W, 32, 32))
        output = self.act2(output)
        output = self.deconv3(output, output_size=(bs, 32 // W, 64, 64))
        output = self.act3(output)
        output = self.deconv4(output, output_size=(bs, 3, 64, 64))
        output = self.activation(output)
        return output


class VAE_GAN_Generator(nn.Module):
    def __init__(self, input_channels, hidden_size, representation_size=(256 // W, 8, 8)):
        super(VAE_GAN_Generator, self).__init__()
        self.input_channels = input_channels
        self.hidden_size = hidden_size
        self.representation_size = representation_size
        self.encoder = Encoder(input_channels, hidden_size)
        self.decoder = Decoder(hidden_size, representation_size)

    def forward(self, x):
        batch_size = x.size()[0]
        mean, logvar = self.encoder(x)
        std = logvar.mul(0.5).exp_()
        reparametrized_noise = Variable(torch.randn((batch_size, self.hidden_size)))
        reparametrized_noise = mean + std * reparametrized_noise
        rec_images = self.decoder(reparametrized_noise)
        return mean, logvar, rec_images


class Discriminator(nn.Module):
    def __init__(self, input_channels, representation_size=(256 // W, 8, 8)):
        super(Discriminator, self).__init__()
        self.representation_size = representation_size
        dim = representation_size[0] * representation_size[1] * representation_size[2]
        self.main = nn.Sequential(
            nn.Conv2d(input_channels, 32 // W, 5, stride=1, padding=2),
            nn.BatchNorm2d(32 // W),
            nn.LeakyReLU(0.2),
            nn.Conv2d(32 // W, 128 // W, 5, stride=2, padding=2),
            nn.BatchNorm2d(128 // W),
            nn.LeakyReLU(0.2),
            nn.Conv2d(128 // W, 256 // W, 5, stride=2, padding=2),
            nn.BatchNorm2d(256 // W),
            nn.LeakyReLU(0.2),
            nn.Conv2d(256 // W, 256 // W, 5, stride=2, padding=2),
            nn.BatchNorm2d(256 // W),
            nn.LeakyReLU(0.2))
        self.lth_features = nn.Sequential(nn.Linear(dim, 2048 // 64), nn.LeakyReLU(0.2))
        self.sigmoid_output = nn.Sequential(nn.Linear(2048 // 64, 1), nn.Sigmoid())

    def forward(self, x):
        batch_size = x.size()[0]
        features = self.main(x)
        lth_rep = self.lth_features(features.view(batch_size, -1))
        output = self.sigmoid_output(lth_rep)
        return output.view(-1)

    def similarity(self, x):
        batch_size = x.size()[0]
        features = self.main(x)
        lth_rep = self.lth_features(features.view(batch_size, -1))
        return lth_rep


def compute():
    torch.manual_seed(0)
    input_channels, hidden_size, lr = 3, 16, 3e-4
    beta, alpha, gamma = 5, 0.1, 15
    G = VAE_GAN_Generator(input_channels, hidden_size)
    D = Discriminator(input_channels)
    criterion = nn.BCELoss()
    opt_enc = optim.RMSprop(G.encoder.parameters(), lr=lr)
    opt_dec = optim.RMSprop(G.decoder.parameters(), lr=lr)
    opt_dis = optim.RMSprop(D.parameters(), lr=lr * alpha)

    data = torch.rand(4, 3, 64, 64) * 2 - 1
    batch_size = data.size()[0]
    ones_label = Variable(torch.ones(batch_size))
    zeros_label = Variable(torch.zeros(batch_size))
    grads = {}

    datav = Variable(data)
    mean, logvar, rec_enc = G(datav)
    noisev = Variable(torch.randn(batch_size, hidden_size))
    rec_noise = G.decoder(noisev)

    # train discriminator
    output = D(datav)
    errD_real = criterion(output, ones_label)
    output = D(rec_enc)
    errD_rec_enc = criterion(output, zeros_label)
    output = D(rec_noise)
    errD_rec_noise = criterion(output, zeros_label)
    dis_img_loss = errD_real + errD_rec_enc + errD_rec_noise
    opt_dis.zero_grad()
    dis_img_loss.backward(retain_graph=True)
    grads.update({"D." + n: p.grad.clone() for n, p in D.named_parameters()})
    opt_dis.step()

    # train decoder
    output = D(datav)
    errD_real = criterion(output, ones_label)
    output = D(rec_enc)
    errD_rec_enc = criterion(output, zeros_label)
    output = D(rec_noise)
    errD_rec_noise = criterion(output, zeros_label)
    similarity_rec_enc = D.similarity(rec_enc)
    similarity_data = D.similarity(datav)
    dis_img_loss = errD_real + errD_rec_enc + errD_rec_noise
    gen_img_loss = - dis_img_loss
    rec_loss = ((similarity_rec_enc - similarity_data) ** 2).mean()
    err_dec = gamma * rec_loss + gen_img_loss
    opt_dec.zero_grad()
    err_dec.backward(retain_graph=True)
    grads.update({"dec." + n: p.grad.clone() for n, p in G.decoder.named_parameters()})
    opt_dec.step()

    # train encoder
    prior_loss = 1 + logvar - mean.pow(2) - logvar.exp()
    prior_loss = (-0.5 * torch.sum(prior_loss)) / torch.numel(mean.data)
    err_enc = prior_loss + beta * rec_loss
    opt_enc.zero_grad()
    err_enc.backward()
    grads.update({"enc." + n: p.grad.clone() for n, p in G.encoder.named_parameters()})
    opt_enc.step()
    return grads


if __name__ == "__main__":
    compute()
