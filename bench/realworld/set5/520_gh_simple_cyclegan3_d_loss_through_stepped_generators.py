# source: https://github.com/cy-xu/simple_CycleGAN/issues/3
# pattern: optimizer_step_between
# codemod_fixable: no
# error: A
# ref_semantics: same
# simple_cygan.py train(): the X->Y' and Y->X' cycles are each backpropagated and optimizer_g.step() updates
# netG_x / netG_y in place; the discriminator losses then use pred_fake = netD_x(fake_y) / netD_y(fake_x) on the
# generator outputs *without detaching them*, so loss_D_x.backward() runs back into netG_x's stale graph ->
# "[3, 64, 7, 7]] is at version 3; expected version 1" (the issue points at pytorch#39141 for the reason; no
# fix was posted). The ref is the standard CycleGAN fix, netD_x(fake_y.detach()) / netD_y(fake_x.detach()): the
# discriminator gradients are unchanged, only the unused generator gradients from the D losses disappear.
# Dataset / torchnet meters / torchsummary / snapshots are dropped; model.py (520helpers_model.py) is used with
# a small config (ngf=ndf=4, one ResNet block, 32x32 crops); two iterations.
import importlib.util
import itertools
import os
from types import SimpleNamespace

import torch as t
import torch.nn as nn

_spec = importlib.util.spec_from_file_location(
    "model", os.path.join(os.path.dirname(os.path.abspath(__file__)), "520helpers_model.py"))
_model = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_model)
ResnetGenerator, NLayerDiscriminator, GANLoss = _model.ResnetGenerator, _model.NLayerDiscriminator, _model.GANLoss


class _Meter:
    def add(self, v):
        pass


def train(opt, dataset):
    device = t.device('cpu')
    netG_x = ResnetGenerator(opt)
    netG_y = ResnetGenerator(opt)
    netD_x = NLayerDiscriminator(opt)
    netD_y = NLayerDiscriminator(opt)

    optimizer_g = t.optim.Adam(itertools.chain(netG_x.parameters(), netG_y.parameters()),
                               lr=opt.g_lr,
                               betas=(opt.beta1, 0.999))
    optimizer_d = t.optim.Adam(itertools.chain(netD_x.parameters(), netD_y.parameters()),
                               lr=opt.d_lr,
                               betas=(opt.beta1, 0.999))

    lambda_X = 10.0  # weight for cycle loss (A -> B -> A^)
    lambda_Y = 10.0  # weight for cycle loss (B -> A -> B^)
    lambda_identity = 0.5
    criterionGAN = GANLoss(gan_mode='lsgan')
    criterionCycle = nn.L1Loss()
    criterionIdt = nn.L1Loss()
    loss_X_meter = loss_Y_meter = score_Dx_real_y = score_Dx_fake_y = _Meter()
    grads = {}

    for epoch in range(1):
        for i, data in enumerate(dataset):

            real_x = data['A'].to(device)
            real_y = data['B'].to(device)

            ######################
            # X -> Y' -> X^ cycle
            ######################

            optimizer_g.zero_grad()  # set g_x and g_y gradients to zero

            fake_y = netG_x(real_x)         # X -> Y'
            prediction = netD_x(fake_y)     #netD_x provide feedback to netG_x
            loss_G_X = criterionGAN(prediction, True)

            # cycle_consistance
            x_hat = netG_y(fake_y)          # Y' -> X^
            # Forward cycle loss x^ = || G_y(G_x(real_x)) ||
            loss_cycle_X = criterionCycle(x_hat, real_x) * lambda_X

            # identity loss
            if lambda_identity > 0:
                # netG_x should be identity if real_y is fed: ||netG_x(real_y) - real_y||
                idt_x = netG_x(real_y)
                loss_idt_x = criterionIdt(idt_x, real_y) * lambda_Y * lambda_identity
            else:
                loss_idt_x = 0.

            loss_X = loss_G_X + loss_cycle_X + loss_idt_x
            loss_X.backward(retain_graph=True)
            optimizer_g.step()

            loss_X_meter.add(loss_X.item())

            ######################
            # Y -> X' -> Y^ cycle
            ######################

            optimizer_g.zero_grad()  # set g_x and g_y gradients to zero

            fake_x = netG_y(real_y)         # Y -> X'
            prediction = netD_y(fake_x)
            loss_G_Y = criterionGAN(prediction, True)
            # print(f'loss_G_Y = {round(float(loss_G_Y), 3)}')

            y_hat = netG_x(fake_x)          # Y -> X' -> Y^
            # Forward cycle loss y^ = || G_x(G_y(real_y)) ||
            loss_cycle_Y = criterionCycle(y_hat, real_y) * lambda_Y

            # identity loss
            if lambda_identity > 0:
                # netG_y should be identiy if real_x is fed: ||netG_y(real_x) - real_x||
                idt_y = netG_y(real_x)
                loss_idt_y = criterionIdt(idt_y, real_x) * lambda_X * lambda_identity
            else:
                loss_idt_y = 0.

            loss_Y = loss_G_Y + loss_cycle_Y + loss_idt_y
            loss_Y.backward(retain_graph=True)
            optimizer_g.step()

            loss_Y_meter.add(loss_Y.item())


            ######################
            # netD_x
            ######################

            optimizer_d.zero_grad()

            # loss_real
            pred_real = netD_x(real_y)
            loss_D_x_real = criterionGAN(pred_real, True)
            score_Dx_real_y.add(float(pred_real.data.mean()))

            # loss_fake
            pred_fake = netD_x(fake_y)
            loss_D_x_fake = criterionGAN(pred_fake, False)
            score_Dx_fake_y.add(float(pred_fake.data.mean()))

            # loss and backward
            loss_D_x = (loss_D_x_real + loss_D_x_fake) * 0.5

            loss_D_x.backward()
            optimizer_d.step()


            ######################
            # netD_y
            ######################

            optimizer_d.zero_grad()

            # loss_real
            pred_real = netD_y(real_x)
            loss_D_y_real = criterionGAN(pred_real, True)

            # loss_fake
            pred_fake = netD_y(fake_x)
            loss_D_y_fake = criterionGAN(pred_fake, False)

            # loss and backward
            loss_D_y = (loss_D_y_real + loss_D_y_fake) * 0.5

            loss_D_y.backward()
            optimizer_d.step()
            grads.update({"it%d.D_y.%s" % (i, n): p.grad.clone() for n, p in netD_y.named_parameters()})

    for name, net in (("G_x", netG_x), ("G_y", netG_y), ("D_x", netD_x), ("D_y", netD_y)):
        grads.update({"final.%s.%s" % (name, n): p.detach().clone() for n, p in net.named_parameters()})
    return grads


def compute():
    t.manual_seed(0)
    opt = SimpleNamespace(input_nc=3, output_nc=3, n_blocks=1, ngf=4, ndf=4, use_dropout=False, norm='instance',
                          init_type='normal', g_lr=2e-4, d_lr=2e-4, beta1=0.5, plot_every=100)
    dataset = [{'A': t.rand(1, 3, 32, 32) * 2 - 1, 'B': t.rand(1, 3, 32, 32) * 2 - 1} for _ in range(2)]
    return train(opt, dataset)


if __name__ == "__main__":
    compute()
