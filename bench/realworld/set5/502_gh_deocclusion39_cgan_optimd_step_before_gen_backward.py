# source: https://github.com/XiaohangZhan/deocclusion/pull/39
# pattern: optimizer_step_between
# codemod_fixable: no
# error: A
# ref_semantics: same
# deocclusion PartialCompletionContentCGAN.step() (models/partial_completion_content_cgan.py, issue #38):
# gen_loss contains the adversarial term self.netD(output), built before the discriminator update;
# self.optimD.step() then updates netD's (spectral-norm) weights in place and gen_loss.backward() fails.
# The merged PR moves the generator update (zero_grad/backward/step) before the discriminator update.
# CUDA, DistModule/average_gradients (single process) and the VGG16 terms of InpaintingLoss are dropped; the
# backbone and losses live in 502helpers_backbone.py as in the repo's models/ package.
import importlib.util
import os

import torch
import torch.nn as nn

_spec = importlib.util.spec_from_file_location(
    "backbone", os.path.join(os.path.dirname(os.path.abspath(__file__)), "502helpers_backbone.py"))
backbone = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(backbone)
AdversarialLoss, InpaintingLoss = backbone.AdversarialLoss, backbone.InpaintingLoss


class utils:
    @staticmethod
    def average_gradients(model):
        pass  # single process: nothing to all-reduce


class PartialCompletionContentCGAN(nn.Module):

    def __init__(self, params):
        super(PartialCompletionContentCGAN, self).__init__()
        self.params = params
        self.with_modal = params.get('with_modal', False)

        # model
        self.model = backbone.PConvUNetStandIn(**params['backbone_param'])
        self.world_size = 1

        # optim
        self.optim = torch.optim.Adam(
            filter(lambda p: p.requires_grad, self.model.parameters()), lr=params['lr'])

        # netD
        self.netD = backbone.InpaintDiscriminator(**params['discriminator_params'])
        self.optimD = torch.optim.Adam(
            self.netD.parameters(), lr=params['lr'] * params['d2g_lr'], betas=(0.0, 0.9))

        # loss
        self.criterion = InpaintingLoss()
        self.gan_criterion = AdversarialLoss(type=params['gan_type'])

    def set_input(self, rgb, visible_mask, modal, rgb_gt=None):
        self.rgb = rgb
        self.visible_mask3 = visible_mask.repeat(
            1, 3, 1, 1)
        if rgb_gt is not None:
            self.rgb_gt = rgb_gt

    def step(self):
        # output
        output, _ = self.model(self.rgb, self.visible_mask3)
        if output.shape[2] != self.rgb.shape[2]:
            output = nn.functional.interpolate(
                output, size=self.rgb.shape[2:4],
                mode="bilinear", align_corners=True)

        # discriminator loss
        dis_input_real = self.rgb_gt
        dis_input_fake = output.detach()
        dis_real, _ = self.netD(dis_input_real)
        dis_fake, _ = self.netD(dis_input_fake)
        dis_real_loss = self.gan_criterion(dis_real, True, True) / self.world_size
        dis_fake_loss = self.gan_criterion(dis_fake, False, True) / self.world_size
        dis_loss = (dis_real_loss + dis_fake_loss) / 2

        # generator adversarial loss
        gen_loss = 0
        gen_input_fake = output
        gen_fake, _ = self.netD(gen_input_fake)
        gen_gan_loss = self.gan_criterion(gen_fake, True, False) * \
            self.params['adv_loss_weight'] / self.world_size
        gen_loss += gen_gan_loss

        # other losses
        loss_dict = self.criterion(self.rgb, self.visible_mask3, output, self.rgb_gt)
        for k in loss_dict.keys():
            loss_dict[k] /= self.world_size
        for key, coef in self.params['lambda_dict'].items():
            value = coef * loss_dict[key]
            gen_loss += value

        # create loss dict
        loss_dict['dis'] = dis_loss
        loss_dict['adv'] = gen_gan_loss

        # update
        self.optimD.zero_grad()
        dis_loss.backward()
        utils.average_gradients(self.netD)
        self.grads = {"netD." + n: p.grad.clone() for n, p in self.netD.named_parameters()}
        self.optimD.step()

        self.optim.zero_grad()
        gen_loss.backward()
        utils.average_gradients(self.model)
        self.grads.update({"model." + n: p.grad.clone() for n, p in self.model.named_parameters()})
        self.optim.step()

        return loss_dict


def compute():
    torch.manual_seed(0)
    params = {'backbone_param': {'input_channels': 3}, 'lr': 1e-3, 'd2g_lr': 0.1, 'gan_type': 'nsgan',
              'discriminator_params': {'in_channels': 3, 'use_sigmoid': True}, 'adv_loss_weight': 0.1,
              'lambda_dict': {'valid': 1.0, 'hole': 6.0}}
    net = PartialCompletionContentCGAN(params)
    out = {}
    for it in range(2):
        rgb_gt = torch.rand(2, 3, 32, 32)
        visible_mask = (torch.rand(2, 1, 32, 32) > 0.3).float()
        net.set_input(rgb_gt * visible_mask, visible_mask, None, rgb_gt)
        net.step()
        out.update({"it%d.%s" % (it, k): v for k, v in net.grads.items()})
    out.update({"final.model." + n: p.detach().clone() for n, p in net.model.named_parameters()})
    out.update({"final.netD." + n: p.detach().clone() for n, p in net.netD.named_parameters()})
    return out


if __name__ == "__main__":
    compute()
