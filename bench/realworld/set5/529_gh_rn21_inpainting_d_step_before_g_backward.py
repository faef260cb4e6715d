# source: https://github.com/geekyutao/RN/issues/21
# pattern: optimizer_step_between
# codemod_fixable: no
# error: A
# ref_semantics: differs
# Region Normalization inpainting main.py train(): d_loss and the generator loss (adversarial term through
# model.discriminator(prediction) + L1) are both built, then `d_loss.backward(); model.dis_optimizer.step()`
# updates the discriminator in place before `g_loss.backward()` runs through it -> "[1, 512, 4, 4]] is at version
# 2; expected version 1" on torch 1.7. The maintainer first suggested `loss = loss + loss1` / downgrading, then
# "d_loss should be back-propagated immediately once you have calculated it" and committed that ("support
# torch1.7"): D is updated right after d_loss, and g_fake = model.discriminator(prediction) is computed afterwards
# with the updated discriminator (ref_semantics: differs).
# G_Net (RN generator) / D_Net are small stand-ins with the same interfaces; AdversarialLoss and InpaintingModel's
# optimizers are the repo's; the data loader is two random (gt, mask) batches.
import torch
import torch.nn as nn
import torch.optim as optim


class AdversarialLoss(nn.Module):
    """
    Adversarial loss
    https://arxiv.org/abs/1711.10337
    """

    def __init__(self, type='nsgan', target_real_label=1.0, target_fake_label=0.0):
        super(AdversarialLoss, self).__init__()
        self.type = type
        self.register_buffer('real_label', torch.tensor(target_real_label))
        self.register_buffer('fake_label', torch.tensor(target_fake_label))
        if type == 'nsgan':
            self.criterion = nn.BCELoss()
        elif type == 'lsgan':
            self.criterion = nn.MSELoss()
        elif type == 'hinge':
            self.criterion = nn.ReLU()

    def __call__(self, outputs, is_real, is_disc=None):
        if self.type == 'hinge':
            if is_disc:
                if is_real:
                    outputs = -outputs
                return self.criterion(1 + outputs).mean()
            else:
                return (-outputs).mean()
        else:
            labels = (self.real_label if is_real else self.fake_label).expand_as(outputs)
            loss = self.criterion(outputs, labels)
            return loss


class G_Net(nn.Module):
    """stand-in for the RN generator: masked image (+ mask) -> completed image"""

    def __init__(self, input_channels=3, residual_blocks=8, threshold=None):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(input_channels + 1, 8, 3, padding=1), nn.ReLU(),
                                 nn.Conv2d(8, input_channels, 3, padding=1), nn.Sigmoid())

    def forward(self, x, mask):
        return self.net(torch.cat([x * (1 - mask), mask], dim=1))


class D_Net(nn.Module):
    def __init__(self, in_channels=3, use_sigmoid=True):
        super().__init__()
        self.use_sigmoid = use_sigmoid
        self.conv1 = nn.Sequential(nn.Conv2d(in_channels, 8, 4, 2, 1), nn.LeakyReLU(0.2, inplace=True))
        self.conv2 = nn.Sequential(nn.Conv2d(8, 1, 4, 1, 1))

    def forward(self, x):
        conv1 = self.conv1(x)
        conv2 = self.conv2(conv1)
        outputs = torch.sigmoid(conv2) if self.use_sigmoid else conv2
        return outputs, [conv1, conv2]


class InpaintingModel(nn.Module):
    def __init__(self, g_lr, d_lr, l1_weight, gan_weight, iter=0, threshold=None):
        super(InpaintingModel, self).__init__()
        self.generator = G_Net(input_channels=3, residual_blocks=8, threshold=threshold)
        self.discriminator = D_Net(in_channels=3, use_sigmoid=True)
        self.l1_loss = nn.L1Loss()
        self.adversarial_loss = AdversarialLoss('nsgan')
        self.g_lr, self.d_lr = g_lr, d_lr
        self.l1_weight, self.gan_weight = l1_weight, gan_weight
        self.global_iter = iter
        self.gen_optimizer = optim.Adam(
            params=self.generator.parameters(),
            lr=float(self.g_lr),
            betas=(0., 0.9)
        )
        self.dis_optimizer = optim.Adam(
            params=self.discriminator.parameters(),
            lr=float(self.d_lr),
            betas=(0., 0.9)
        )


def train(model, training_data_loader):
    iteration, avg_g_loss, avg_d_loss, avg_l1_loss, avg_gan_loss = 0, 0, 0, 0, 0
    last_l1_loss, last_gan_loss, cur_l1_loss, cur_gan_loss = 0, 0, 0, 0
    model.train()
    grads = {}
    for batch in training_data_loader:
        gt, mask, index = batch

        prediction = model.generator(gt, mask)
        merged_result = prediction * mask + gt * (1 - mask)

        # Compute Loss
        g_loss, d_loss = 0, 0

        d_real, _ = model.discriminator(gt)
        d_fake, _ = model.discriminator(prediction.detach())
        d_real_loss = model.adversarial_loss(d_real, True, True)
        d_fake_loss = model.adversarial_loss(d_fake, False, True)
        d_loss += (d_real_loss + d_fake_loss) / 2

        g_fake, _ = model.discriminator(prediction)
        g_gan_loss = model.adversarial_loss(g_fake, True, False)
        g_loss += model.gan_weight * g_gan_loss
        g_l1_loss = model.l1_loss(gt, merged_result) / torch.mean(mask)
        g_loss += model.l1_weight * g_l1_loss

        # Record
        cur_l1_loss += g_l1_loss.data.item()
        cur_gan_loss += g_gan_loss.data.item()
        avg_l1_loss += g_l1_loss.data.item()
        avg_gan_loss += g_gan_loss.data.item()
        avg_g_loss += g_loss.data.item()
        avg_d_loss += d_loss.data.item()

        # Backward
        d_loss.backward()
        model.dis_optimizer.step()
        model.dis_optimizer.zero_grad()

        g_loss.backward()
        grads.update({"it%d.G.%s" % (iteration, n): p.grad.clone() for n, p in model.generator.named_parameters()})
        model.gen_optimizer.step()
        model.gen_optimizer.zero_grad()

        model.global_iter += 1
        iteration += 1
    grads.update({"final.G." + n: p.detach().clone() for n, p in model.generator.named_parameters()})
    grads.update({"final.D." + n: p.detach().clone() for n, p in model.discriminator.named_parameters()})
    return grads


def compute():
    torch.manual_seed(0)
    model = InpaintingModel(g_lr=1e-4, d_lr=1e-3, l1_weight=1.0, gan_weight=0.1, threshold=0.8)
    loader = [(torch.rand(2, 3, 16, 16), (torch.rand(2, 1, 16, 16) > 0.7).float(), i) for i in range(2)]
    return train(model, loader)


if __name__ == "__main__":
    compute()
