# source: https://github.com/cyclomon/3dbraingen/issues/16
# pattern: optimizer_step_between
# codemod_fixable: no
# error: A
# ref_semantics: differs
# Alpha-WGAN training loop (Alpha_WGAN_ADNI_train.ipynb, Model_alphaWGAN.py): the encoder/generator phase builds
# c_loss = -CD(z_hat).mean() with z_hat = E(real_images), backpropagates loss1 with retain_graph=True and steps
# e_optimizer / g_optimizer (in-place updates of E's Conv3d weights). The code-discriminator phase then uses the
# same c_loss in loss3 = -CD(z_rand).mean() - c_loss + gradient_penalty_cd; loss3.backward(retain_graph=True)
# runs back into the stale encoder graph ("[1, 64, 3, 3, 3]]... is at version 293; expected version 292"
# on the reporter's side; here the encoder's conv weight). The maintainer only answered that the repo was
# written for torch 0.4; the reporter's workaround (commenting the backward out) stops training CD.
# The ref is the obvious fix: in the CD phase recompute the code-critic term from the current networks with a
# detached code, loss3 = -CD(z_rand).mean() + CD(z_hat.detach()).mean() + gp. It differs from what the original
# computed: c_loss was built while CD.requires_grad was False, so the original loss3 gave CD no gradient from
# the z_hat term (only E received one).
# Model_alphaWGAN.py classes are kept with reduced widths (channel / latent_dim / num_units) and run on 32^3
# volumes (the generator's last upsample dropped, conv5 padding 1) to keep the CPU run short;
# CUDA, Variable(volatile=True), nibabel plotting and checkpoints are dropped.
import warnings

import torch
from torch import nn
from torch import optim
from torch.nn import functional as F
from torch.autograd import Variable

warnings.filterwarnings("ignore")
_eps = 1e-15


#***********************************************
#Encoder and Discriminator has same architecture
#***********************************************
class Discriminator(nn.Module):
    def __init__(self, channel=512,out_class=1,is_dis =True):
        super(Discriminator, self).__init__()
        self.is_dis=is_dis
        self.channel = channel
        n_class = out_class

        self.conv1 = nn.Conv3d(1, channel//8, kernel_size=4, stride=2, padding=1)
        self.conv2 = nn.Conv3d(channel//8, channel//4, kernel_size=4, stride=2, padding=1)
        self.bn2 = nn.BatchNorm3d(channel//4)
        self.conv3 = nn.Conv3d(channel//4, channel//2, kernel_size=4, stride=2, padding=1)
        self.bn3 = nn.BatchNorm3d(channel//2)
        self.conv4 = nn.Conv3d(channel//2, channel, kernel_size=4, stride=2, padding=1)
        self.bn4 = nn.BatchNorm3d(channel)
        self.conv5 = nn.Conv3d(channel, n_class, kernel_size=4, stride=1, padding=1)  # padding 0 -> 1 for 32^3 inputs

    def forward(self, x, _return_activations=False):
        h1 = F.leaky_relu(self.conv1(x), negative_slope=0.2)
        h2 = F.leaky_relu(self.bn2(self.conv2(h1)), negative_slope=0.2)
        h3 = F.leaky_relu(self.bn3(self.conv3(h2)), negative_slope=0.2)
        h4 = F.leaky_relu(self.bn4(self.conv4(h3)), negative_slope=0.2)
        h5 = self.conv5(h4)
        output = h5

        return output


class Code_Discriminator(nn.Module):
    def __init__(self, code_size=100,num_units=750):
        super(Code_Discriminator, self).__init__()
        n_class = 1
        self.l1 = nn.Sequential(nn.Linear(code_size, num_units),
                                nn.BatchNorm1d(num_units),
                                nn.LeakyReLU(0.2,inplace=True))
        self.l2 = nn.Sequential(nn.Linear(num_units, num_units),
                                nn.BatchNorm1d(num_units),
                                nn.LeakyReLU(0.2,inplace=True))
        self.l3 = nn.Linear(num_units, 1)

    def forward(self, x):
        h1 = self.l1(x)
        h2 = self.l2(h1)
        h3 = self.l3(h2)
        output = h3

        return output


class Generator(nn.Module):
    def __init__(self, noise:int=100, channel:int=64):
        super(Generator, self).__init__()
        _c = channel

        self.relu = nn.ReLU()
        self.noise = noise
        self.tp_conv1 = nn.ConvTranspose3d(noise, _c*8, kernel_size=4, stride=1, padding=0, bias=False)
        self.bn1 = nn.BatchNorm3d(_c*8)

        self.tp_conv2 = nn.Conv3d(_c*8, _c*4, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm3d(_c*4)

        self.tp_conv3 = nn.Conv3d(_c*4, _c*2, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn3 = nn.BatchNorm3d(_c*2)

        self.tp_conv4 = nn.Conv3d(_c*2, _c, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn4 = nn.BatchNorm3d(_c)

        self.tp_conv5 = nn.Conv3d(_c, 1, kernel_size=3, stride=1, padding=1, bias=False)

    def forward(self, noise):

        noise = noise.view(-1,self.noise,1,1,1)
        h = self.tp_conv1(noise)
        h = self.relu(self.bn1(h))

        h = F.upsample(h,scale_factor = 2)
        h = self.tp_conv2(h)
        h = self.relu(self.bn2(h))

        h = F.upsample(h,scale_factor = 2)
        h = self.tp_conv3(h)
        h = self.relu(self.bn3(h))

        h = F.upsample(h,scale_factor = 2)
        h = self.tp_conv4(h)
        h = self.relu(self.bn4(h))

        h = self.tp_conv5(h)  # (last F.upsample dropped: 32^3 volumes instead of 64^3)

        h = F.tanh(h)

        return h


def calc_gradient_penalty(model, x, x_gen, w=10):
    """WGAN-GP gradient penalty"""
    assert x.size()==x_gen.size(), "real and sampled sizes do not match"
    alpha_size = tuple((len(x), *(1,)*(x.dim()-1)))
    alpha_t = torch.Tensor
    alpha = alpha_t(*alpha_size).uniform_()
    x_hat = x.data*alpha + x_gen.data*(1-alpha)
    x_hat = Variable(x_hat, requires_grad=True)

    def eps_norm(x):
        x = x.view(len(x), -1)
        return (x*x+_eps).sum(-1).sqrt()
    def bi_penalty(x):
        return (x-1)**2

    grad_xhat = torch.autograd.grad(model(x_hat).sum(), x_hat, create_graph=True, only_inputs=True)[0]

    penalty = w*bi_penalty(eps_norm(grad_xhat)).mean()
    return penalty


def compute():
    torch.manual_seed(0)
    latent_dim = 8
    G = Generator(noise = latent_dim, channel = 2)
    CD = Code_Discriminator(code_size = latent_dim ,num_units = 16)
    D = Discriminator(channel = 8, is_dis=True)
    E = Discriminator(channel = 8, out_class = latent_dim,is_dis=False)

    g_optimizer = optim.Adam(G.parameters(), lr=0.0002)
    d_optimizer = optim.Adam(D.parameters(), lr=0.0002)
    e_optimizer = optim.Adam(E.parameters(), lr = 0.0002)
    cd_optimizer = optim.Adam(CD.parameters(), lr = 0.0002)
    criterion_l1 = nn.L1Loss()

    def inf_train_gen():
        while True:
            yield torch.rand(2, 1, 32, 32, 32) * 2 - 1

    out = {}
    g_iter = 1
    d_iter = 1
    cd_iter =1
    TOTAL_ITER = 1  # one iteration: the failing backward is in the first one; the 3-D nets are slow on CPU
    gen_load = inf_train_gen()
    for iteration in range(TOTAL_ITER):
        for p in D.parameters():
            p.requires_grad = False
        for p in CD.parameters():
            p.requires_grad = False
        for p in E.parameters():
            p.requires_grad = True
        for p in G.parameters():
            p.requires_grad = True

        ###############################################
        # Train Encoder - Generator
        ###############################################
        for iters in range(g_iter):
            G.zero_grad()
            E.zero_grad()
            real_images = gen_load.__next__()
            _batch_size = real_images.size(0)
            z_rand = torch.randn((_batch_size,latent_dim))
            z_hat = E(real_images).view(_batch_size,-1)
            x_hat = G(z_hat)
            x_rand = G(z_rand)
            c_loss = -CD(z_hat).mean()

            d_real_loss = D(x_hat).mean()
            d_fake_loss = D(x_rand).mean()
            d_loss = -d_fake_loss-d_real_loss
            l1_loss =10* criterion_l1(x_hat,real_images)
            loss1 = l1_loss + c_loss + d_loss

            if iters<g_iter-1:
                loss1.backward()
            else:
                loss1.backward(retain_graph=True)
            out.update({"it%d.E.%s" % (iteration, n): p.grad.clone() for n, p in E.named_parameters()})
            e_optimizer.step()
            g_optimizer.step()
            g_optimizer.step()

        ###############################################
        # Train D
        ###############################################
        for p in D.parameters():
            p.requires_grad = True
        for p in CD.parameters():
            p.requires_grad = False
        for p in E.parameters():
            p.requires_grad = False
        for p in G.parameters():
            p.requires_grad = False

        for iters in range(d_iter):
            d_optimizer.zero_grad()
            real_images = gen_load.__next__()
            _batch_size = real_images.size(0)
            z_rand = torch.randn((_batch_size,latent_dim))
            z_hat = E(real_images).view(_batch_size,-1)
            x_hat = G(z_hat)
            x_rand = G(z_rand)
            x_loss2 = -2*D(real_images).mean()+D(x_hat).mean()+D(x_rand).mean()
            gradient_penalty_r = calc_gradient_penalty(D,real_images.data, x_rand.data)
            gradient_penalty_h = calc_gradient_penalty(D,real_images.data, x_hat.data)

            loss2 = x_loss2+gradient_penalty_r+gradient_penalty_h
            loss2.backward(retain_graph=True)
            out.update({"it%d.D.%s" % (iteration, n): p.grad.clone() for n, p in D.named_parameters()})
            d_optimizer.step()

        ###############################################
        # Train CD
        ###############################################
        for p in D.parameters():
            p.requires_grad = False
        for p in CD.parameters():
            p.requires_grad = True
        for p in E.parameters():
            p.requires_grad = False
        for p in G.parameters():
            p.requires_grad = False

        for iters in range(cd_iter):
            cd_optimizer.zero_grad()
            z_rand = torch.randn((_batch_size,latent_dim))
            gradient_penalty_cd = calc_gradient_penalty(CD,z_hat.data, z_rand.data)
            loss3 = -CD(z_rand).mean() - c_loss + gradient_penalty_cd

            loss3.backward(retain_graph=True)
            out.update({"it%d.CD.%s" % (iteration, n): p.grad.clone() for n, p in CD.named_parameters()})
            cd_optimizer.step()
    for name, net in (("G", G), ("E", E), ("D", D), ("CD", CD)):
        out.update({"final.%s.%s" % (name, n): p.detach().clone() for n, p in net.named_parameters()})
    return out


if __name__ == "__main__":
    compute()
