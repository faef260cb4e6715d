# source: https://github.com/psh01087/Vid-ODE/issues/6
# pattern: optimizer_step_between
# codemod_fixable: no
# error: A
# ref_semantics: same
# Vid-ODE main.py train(): the generator's adversarial loss (netG_adv_loss -> Discriminator.forward(fake)) is
# built before the D update; optimizer_netD.step() then changes netD_img / netD_seq weights in place and
# loss_netG.backward() runs through the stale discriminator graph (error on torch >= 1.5).
# Fix from the thread (Ice9Coffee, confirmed by a second user): train G first, then D.
# The ODE-ConvGRU generator is replaced by a small conv stand-in with the same compute_all_losses() interface;
# discriminator widths are reduced (64/128/256/512 -> 8/16/32/32).
import torch
import torch.nn as nn
import torch.optim as optim

W = {64: 8, 128: 16, 256: 32, 512: 32}


class ConvNormAct(nn.Module):

    def __init__(self, in_ch, out_ch, kernel_size, stride, padding, act_type='relu'):

        super(ConvNormAct, self).__init__()

        layers = []
        layers += [nn.Conv2d(in_ch, out_ch, kernel_size, stride, padding)]

        layers += [nn.InstanceNorm2d(out_ch)]

        if act_type == 'relu':
            layers += [nn.ReLU(inplace=True)]
        elif act_type == 'lrelu':
            layers += [nn.LeakyReLU(0.2)]

        self.main = nn.Sequential(*layers)

    def forward(self, x):
        return self.main(x)


class Discriminator(nn.Module):

    def __init__(self, in_ch, device, seq=False, is_extrap=True):

        super(Discriminator, self).__init__()

        self.device = device
        self.seq = seq
        self.is_extrap = is_extrap

        self.layer_1 = nn.Sequential(
            nn.Conv2d(in_ch, W[64], kernel_size=4, stride=2, padding=1, bias=False),
            nn.LeakyReLU(0.2))
        self.layer_2 = ConvNormAct(W[64], W[128], kernel_size=4, stride=2, padding=1, act_type='lrelu')
        self.layer_3 = ConvNormAct(W[128], W[256], kernel_size=4, stride=2, padding=1, act_type='lrelu')
        self.layer_4 = ConvNormAct(W[256], W[512], kernel_size=4, stride=1, padding=2, act_type='lrelu')
        self.last_conv = nn.Conv2d(W[512], W[64], kernel_size=4, stride=1, padding=2, bias=False)

    def forward(self, x):
        h = self.layer_1(x)
        h = self.layer_2(h)
        h = self.layer_3(h)
        h = self.layer_4(h)
        return self.last_conv(h)

    def netD_adv_loss(self, real, fake, input_real):

        if self.seq:
            real, fake = self.rearrange_seq(real, fake, input_real, only_fake=False)
        elif not self.seq:
            b, t, c, h, w = fake.size()
            real = real.contiguous().view(-1, c, h, w)
            fake = fake.contiguous().view(-1, c, h, w)

        pred_fake = self.forward(fake.detach())
        pred_real = self.forward(real)

        # GAN loss type
        real_label = torch.ones_like(pred_real).to(self.device)
        loss_fake = torch.mean((pred_fake) ** 2)
        loss_real = torch.mean((pred_real - real_label) ** 2)
        loss_D = (loss_real + loss_fake) * 0.5

        return loss_D

    def netG_adv_loss(self, fake, input_real):
        b, t, c, h, w = fake.size()
        if self.seq:
            fake = self.rearrange_seq(None, fake, input_real, only_fake=True)
        elif not self.seq:
            fake = fake.contiguous().view(-1, c, h, w)

        pred_fake = self.forward(fake)

        # GAN loss type
        real_label = torch.ones_like(pred_fake).to(self.device)
        loss_real = torch.mean((pred_fake - real_label) ** 2)

        return loss_real

    def rearrange_seq(self, real, fake, input_real, only_fake=True):

        b, t, c, h, w = fake.size()
        fake_seqs = []
        for i in range(t):
            fake_seq = torch.cat([input_real[:, i:, ...], fake[:, :i+1, ...]], dim=1)
            fake_seqs += [fake_seq]
        fake_seqs = torch.cat(fake_seqs, dim=0).view(b * t, -1, h, w)

        if only_fake:
            return fake_seqs

        real_seqs = []
        for i in range(t):
            real_seq = torch.cat([input_real[:, i:, ...], real[:, :i+1, ...]], dim=1)
            real_seqs += [real_seq]
        real_seqs = torch.cat(real_seqs, dim=0).view(b * t, -1, h, w)

        return real_seqs, fake_seqs


def create_netD(opt, device):
    seq_len = opt["sample_size"] // 2
    seq_len += 1  # extrap
    netD_img = Discriminator(in_ch=3, device=device, seq=False, is_extrap=True).to(device)
    netD_seq = Discriminator(in_ch=3 * (seq_len), device=device, seq=True, is_extrap=True).to(device)
    optimizer_netD = optim.Adamax(list(netD_img.parameters()) + list(netD_seq.parameters()), lr=opt["lr"])
    return netD_img, netD_seq, optimizer_netD


class StandInVidODE(nn.Module):
    """Stand-in for the ODE-ConvGRU generator: predicts t future frames from t observed frames."""

    def __init__(self, t):
        super().__init__()
        self.t = t
        self.net = nn.Sequential(nn.Conv2d(3 * t, 16, 3, padding=1), nn.Tanh(), nn.Conv2d(16, 3 * t, 3, padding=1))

    def compute_all_losses(self, batch_dict):
        x = batch_dict["observed_data"]
        b, t, c, h, w = x.shape
        pred_y = torch.sigmoid(self.net(x.reshape(b, t * c, h, w))).view(b, t, c, h, w)
        loss = torch.mean((pred_y - batch_dict["data_to_predict"]) ** 2)
        return {"loss": loss, "pred_y": pred_y}


def train(opt, netG, batches, device):
    optimizer_netG = optim.Adamax(netG.parameters(), lr=opt["lr"])
    netD_img, netD_seq, optimizer_netD = create_netD(opt, device)
    grads = {}
    for batch_dict in batches:
        res = netG.compute_all_losses(batch_dict)
        loss_netG = res["loss"]

        # Compute Adversarial Loss
        real = batch_dict["data_to_predict"]
        fake = res["pred_y"]
        input_real = batch_dict["observed_data"]

        loss_netD = opt["lamb_adv"] * netD_seq.netD_adv_loss(real, fake, input_real)
        loss_netD += opt["lamb_adv"] * netD_img.netD_adv_loss(real, fake, None)

        loss_adv_netG = opt["lamb_adv"] * netD_seq.netG_adv_loss(fake, input_real)
        loss_adv_netG += opt["lamb_adv"] * netD_img.netG_adv_loss(fake, None)
        loss_netG += loss_adv_netG

        # Train D
        optimizer_netD.zero_grad()
        loss_netD.backward()
        grads.update({"D_img." + n: p.grad.clone() for n, p in netD_img.named_parameters()})
        optimizer_netD.step()

        # Train G
        optimizer_netG.zero_grad()
        loss_netG.backward()
        grads.update({"G." + n: p.grad.clone() for n, p in netG.named_parameters()})
        optimizer_netG.step()
    grads.update({"final.G." + n: p.detach().clone() for n, p in netG.named_parameters()})
    grads.update({"final.D_seq." + n: p.detach().clone() for n, p in netD_seq.named_parameters()})
    return grads


def compute():
    torch.manual_seed(0)
    opt = {"sample_size": 4, "lr": 1e-3, "lamb_adv": 0.003}
    t = opt["sample_size"] // 2
    netG = StandInVidODE(t)
    batches = [{"observed_data": torch.rand(1, t, 3, 16, 16), "data_to_predict": torch.rand(1, t, 3, 16, 16)}
               for _ in range(2)]
    return train(opt, netG, batches, "cpu")


if __name__ == "__main__":
    compute()
