# source: https://github.com/YixinChen-AI/CVAE-GAN-zoos-PyTorch-Beginner/issues/10
# pattern: optimizer_step_between
# codemod_fixable: no
# error: A
# ref_semantics: differs
# VAE-GAN/VAE-GAN.py training loop: stage (2) runs recon_data, mean, logstd = vae(data),
# vae_loss.backward(retain_graph=True) and optimizerVAE.step() (in-place update of the VAE), then stage (3)
# backpropagates errVAE = criterion(D(recon_data), real_label) through the same recon_data graph, i.e. through the
# stepped decoder -> "one of the variables needed for gradient computation has been modified by an inplace
# operation" at errVAE.backward() (the reporter runs the file unchanged on torch 1.8.1). No answer in the issue;
# the ref is the usual restructuring: take both VAE backward passes (stage 2 and stage 3) before a single
# optimizerVAE.step(), which merges the two VAE updates into one (ref_semantics: differs).
# MNIST is replaced by random 28x28 images (batch 8), nz = 16; the model classes are the file's; two iterations.
from __future__ import print_function
import torch
import torch.nn as nn
import torch.optim as optim

nz = 16
device = 'cpu'


class VAE(nn.Module):
    def __init__(self):
        super(VAE, self).__init__()
        # 定义编码器
        self.encoder = nn.Sequential(
            nn.Conv2d(1,16,kernel_size=3,stride=2,padding=1),
            nn.BatchNorm2d(16),
            nn.LeakyReLU(0.2,inplace=True),
            nn.Conv2d(16,32,kernel_size=3,stride=2,padding=1),
            nn.BatchNorm2d(32),
            nn.LeakyReLU(0.2,inplace=True),
            nn.Conv2d(32,32,kernel_size=3,stride=1,padding=1),
            nn.BatchNorm2d(32),
            nn.LeakyReLU(0.2,inplace=True),
        )
        self.encoder_fc1=nn.Linear(32*7*7,nz)
        self.encoder_fc2=nn.Linear(32*7*7,nz)
        self.Sigmoid = nn.Sigmoid()
        self.decoder_fc = nn.Linear(nz,32 * 7 * 7)
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(32, 16, 4, 2, 1),
            nn.ReLU(inplace=True),
            nn.ConvTranspose2d(16, 1, 4, 2, 1),
            nn.Sigmoid(),
        )

    def noise_reparameterize(self,mean,logvar):
        eps = torch.randn(mean.shape).to(device)
        z = mean + eps * torch.exp(logvar)
        return z

    def forward(self, x):
        out1,out2 = self.encoder(x),self.encoder(x)
        mean = self.encoder_fc1(out1.view(out1.shape[0],-1))
        logstd = self.encoder_fc2(out2.view(out2.shape[0],-1))
        z = self.noise_reparameterize(mean,logstd)
        out3 = self.decoder_fc(z)
        out3 = out3.view(out3.shape[0],32,7,7)
        out3 = self.decoder(out3)
        return out3,mean,logstd

class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()
        self.dis = nn.Sequential(
            nn.Conv2d(1, 32, 3, stride=1, padding=1),
            nn.LeakyReLU(0.2, True),
            nn.MaxPool2d((2, 2)),

            nn.Conv2d(32, 64, 3, stride=1, padding=1),
            nn.LeakyReLU(0.2, True),
            nn.MaxPool2d((2, 2)),
        )
        self.fc = nn.Sequential(
            nn.Linear(7 * 7 * 64, 1024),
            nn.LeakyReLU(0.2, True),
            nn.Linear(1024, 1),
            nn.Sigmoid()
        )

    def forward(self, input):
        x = self.dis(input)
        x = x.view(x.size(0), -1)
        x = self.fc(x)
        return x.squeeze(1)

def loss_function(recon_x,x,mean,logstd):
    # BCE = F.binary_cross_entropy(recon_x,x,reduction='sum')
    MSE = MSECriterion(recon_x,x)
    # 因为var是标准差的自然对数，先求自然对数然后平方转换成方差
    var = torch.pow(torch.exp(logstd),2)
    KLD = -0.5 * torch.sum(1+torch.log(var)-torch.pow(mean,2)-var)
    return MSE+KLD


def compute():
    global MSECriterion
    torch.manual_seed(88)
    vae = VAE().to(device)
    D = Discriminator().to(device)
    criterion = nn.BCELoss().to(device)
    MSECriterion = nn.MSELoss().to(device)
    optimizerD = optim.Adam(D.parameters(), lr=0.0001)
    optimizerVAE = optim.Adam(vae.parameters(), lr=0.0001)
    dataloader = [(torch.rand(8, 1, 28, 28), torch.zeros(8)) for _ in range(2)]
    out = {}
    for i, (data,label) in enumerate(dataloader, 0):
        ###################################################################
        # (1) Update D network: maximize log(D(x)) + log(1 - D(G(z)))
        ###################################################################
        # train with real
        D.zero_grad()
        data = data.to(device)
        label = label.to(device)
        batch_size = data.shape[0]
        output = D(data)
        real_label = torch.ones(batch_size).to(device)
        fake_label = torch.zeros(batch_size).to(device)
        errD_real = criterion(output, real_label)
        errD_real.backward()
        # train with fake, taking the noise vector z as the input of D network
        z = torch.randn(batch_size, nz).to(device)
        fake_data = vae.decoder_fc(z).view(z.shape[0], 32, 7, 7)
        fake_data = vae.decoder(fake_data)
        output = D(fake_data)
        errD_fake = criterion(output, fake_label)
        errD_fake.backward()
        errD = errD_real + errD_fake
        optimizerD.step()
        ###################################################
        # (2) Update G network which is the decoder of VAE
        ###################################################
        recon_data,mean,logstd = vae(data)
        vae.zero_grad()
        vae_loss = loss_function(recon_data,data,mean,logstd)
        vae_loss.backward(retain_graph=True)
        optimizerVAE.step()
        ###############################################
        # (3) Update G network: maximize log(D(G(z)))
        ###############################################
        vae.zero_grad()
        real_label = torch.ones(batch_size).to(device)
        output = D(recon_data)
        errVAE = criterion(output, real_label)
        errVAE.backward()
        out.update({"it%d.vae.%s" % (i, n): p.grad.clone() for n, p in vae.named_parameters()})
        optimizerVAE.step()
    out.update({"final.vae." + n: p.detach().clone() for n, p in vae.named_parameters()})
    return out


if __name__ == "__main__":
    compute()
