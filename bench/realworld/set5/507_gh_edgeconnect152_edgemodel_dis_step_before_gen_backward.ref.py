# reference fix for 507 (tadeasmtech in edge-connect#152): EdgeModel.backward() does gen_loss first, then dis_loss.
import importlib.util
import os
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.optim as optim

_spec = importlib.util.spec_from_file_location(
    "networks", os.path.join(os.path.dirname(os.path.abspath(__file__)), "507helpers_networks.py"))
_networks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_networks)
EdgeGenerator, Discriminator, AdversarialLoss = _networks.EdgeGenerator, _networks.Discriminator, _networks.AdversarialLoss


class BaseModel(nn.Module):
    def __init__(self, name, config):
        super(BaseModel, self).__init__()

        self.name = name
        self.config = config
        self.iteration = 0


class EdgeModel(BaseModel):
    def __init__(self, config):
        super(EdgeModel, self).__init__('EdgeModel', config)

        # generator input: [grayscale(1) + edge(1) + mask(1)]
        # discriminator input: (grayscale(1) + edge(1))
        generator = EdgeGenerator(use_spectral_norm=True)
        discriminator = Discriminator(in_channels=2, use_sigmoid=config.GAN_LOSS != 'hinge')
        l1_loss = nn.L1Loss()
        adversarial_loss = AdversarialLoss(type=config.GAN_LOSS)

        self.add_module('generator', generator)
        self.add_module('discriminator', discriminator)

        self.add_module('l1_loss', l1_loss)
        self.add_module('adversarial_loss', adversarial_loss)

        self.gen_optimizer = optim.Adam(
            params=generator.parameters(),
            lr=float(config.LR),
            betas=(config.BETA1, config.BETA2)
        )

        self.dis_optimizer = optim.Adam(
            params=discriminator.parameters(),
            lr=float(config.LR) * float(config.D2G_LR),
            betas=(config.BETA1, config.BETA2)
        )

    def process(self, images, edges, masks):
        self.iteration += 1

        # zero optimizers
        self.gen_optimizer.zero_grad()
        self.dis_optimizer.zero_grad()

        # process outputs
        outputs = self(images, edges, masks)
        gen_loss = 0
        dis_loss = 0

        # discriminator loss
        dis_input_real = torch.cat((images, edges), dim=1)
        dis_input_fake = torch.cat((images, outputs.detach()), dim=1)
        dis_real, dis_real_feat = self.discriminator(dis_input_real)        # in: (grayscale(1) + edge(1))
        dis_fake, dis_fake_feat = self.discriminator(dis_input_fake)        # in: (grayscale(1) + edge(1))
        dis_real_loss = self.adversarial_loss(dis_real, True, True)
        dis_fake_loss = self.adversarial_loss(dis_fake, False, True)
        dis_loss += (dis_real_loss + dis_fake_loss) / 2

        # generator adversarial loss
        gen_input_fake = torch.cat((images, outputs), dim=1)
        gen_fake, gen_fake_feat = self.discriminator(gen_input_fake)        # in: (grayscale(1) + edge(1))
        gen_gan_loss = self.adversarial_loss(gen_fake, True, False)
        gen_loss += gen_gan_loss

        # generator feature matching loss
        gen_fm_loss = 0
        for i in range(len(dis_real_feat)):
            gen_fm_loss += self.l1_loss(gen_fake_feat[i], dis_real_feat[i].detach())
        gen_fm_loss = gen_fm_loss * self.config.FM_LOSS_WEIGHT
        gen_loss += gen_fm_loss

        # create logs
        logs = [
            ("l_d1", dis_loss.item()),
            ("l_g1", gen_gan_loss.item()),
            ("l_fm", gen_fm_loss.item()),
        ]

        return outputs, gen_loss, dis_loss, logs

    def forward(self, images, edges, masks):
        edges_masked = (edges * (1 - masks))
        images_masked = (images * (1 - masks)) + masks
        inputs = torch.cat((images_masked, edges_masked, masks), dim=1)
        outputs = self.generator(inputs)                                    # in: [grayscale(1) + edge(1) + mask(1)]
        return outputs

    def backward(self, gen_loss=None, dis_loss=None):
        if gen_loss is not None:  # gen_loss first, not the dis_loss
            gen_loss.backward()
        self.gen_optimizer.step()

        if dis_loss is not None:
            dis_loss.backward()
        self.dis_optimizer.step()


def compute():
    torch.manual_seed(0)
    config = SimpleNamespace(GAN_LOSS='nsgan', LR=0.0001, D2G_LR=0.1, BETA1=0.0, BETA2=0.9, FM_LOSS_WEIGHT=10.0)
    edge_model = EdgeModel(config)
    out = {}
    for it in range(2):
        images = torch.rand(1, 1, 32, 32)
        edges = (torch.rand(1, 1, 32, 32) > 0.8).float()
        masks = (torch.rand(1, 1, 32, 32) > 0.7).float()
        outputs, gen_loss, dis_loss, logs = edge_model.process(images, edges, masks)
        edge_model.backward(gen_loss, dis_loss)
        out.update({"it%d.gen.%s" % (it, n): p.grad.clone() for n, p in edge_model.generator.named_parameters()})
        out.update({"it%d.dis.%s" % (it, n): p.grad.clone() for n, p in edge_model.discriminator.named_parameters()})
    out.update({"final.dis." + n: p.detach().clone() for n, p in edge_model.discriminator.named_parameters()})
    return out


if __name__ == "__main__":
    compute()
