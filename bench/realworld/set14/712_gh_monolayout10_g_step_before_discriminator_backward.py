# source: https://github.com/manila95/monolayout/pull/10
# pattern: optimizer_step_between
# codemod_fixable: no
# error: A
# ref_semantics: differs
# MonoLayout train.py, Trainer.run_epoch (adversarial training after discr_train_epoch): the discriminator loss is
# built from the generator's own `fake_pred = self.models["discriminator"](outputs["topview"])` (not detached); the
# loop calls `loss_G.backward(retain_graph=True)`, then `self.model_optimizer.step()` (encoder + decoder), then
# `loss_D.backward()`, which goes back through the decoder and encoder weights the step just changed: "one of the
# variables needed for gradient computation has been modified by an inplace operation" (torch >= 1.5). Merged PR
# #10 ("Changed order of backward and step, to fix runtime error"): model_optimizer.step() moved after
# loss_D.backward(). The generator's step then also sees loss_D's gradient (ref_semantics: differs).
# Stand-ins: monolayout.Encoder (ResNet-18), Decoder and Discriminator are small conv nets with the same roles and
# output shapes (2-class top view, a patch of discriminator logits); CUDA dropped; one random batch (image, top-view
# labels, a real top view for the discriminator) for the train_loader; the option values are argparse defaults or
# small stand-ins (lambda_D 0.01, discr_train_epoch 5, epoch 6).
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.optim as optim
from torch.autograd import Variable


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(),
                                 nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU())

    def forward(self, x):
        return self.net(x)


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1), nn.ReLU(),
                                 nn.ConvTranspose2d(8, 2, 4, stride=2, padding=1))

    def forward(self, features):
        return self.net(features)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(2, 8, 4, stride=2, padding=1), nn.LeakyReLU(0.2),
                                 nn.Conv2d(8, 1, 4, stride=2, padding=1))

    def forward(self, x):
        return self.net(x)


class Trainer:
    def __init__(self):
        self.opt = SimpleNamespace(type="static", static_weight=5., dynamic_weight=15., lr=1e-5,
                                   lambda_D=0.01, discr_train_epoch=5, occ_map_size=16, batch_size=2)
        self.models = {}
        self.weight = {}
        self.weight["static"] = self.opt.static_weight
        self.weight["dynamic"] = self.opt.dynamic_weight
        self.criterion_d = nn.BCEWithLogitsLoss()
        self.parameters_to_train = []
        self.parameters_to_train_D = []

        # Initializing models
        self.models["encoder"] = Encoder()
        self.models["decoder"] = Decoder()
        self.models["discriminator"] = Discriminator()

        for key in self.models.keys():
            if "discr" in key:
                self.parameters_to_train_D += list(
                    self.models[key].parameters())
            else:
                self.parameters_to_train += list(self.models[key].parameters())

        # Optimization
        self.model_optimizer = optim.Adam(
            self.parameters_to_train, self.opt.lr)
        self.model_optimizer_D = optim.Adam(
            self.parameters_to_train_D, self.opt.lr)

        self.patch = (1, self.opt.occ_map_size // 2 ** 2, self.opt.occ_map_size // 2 ** 2)
        self.valid = Variable(torch.ones((self.opt.batch_size, *self.patch)), requires_grad=False)
        self.fake = Variable(torch.zeros((self.opt.batch_size, *self.patch)), requires_grad=False)

    def process_batch(self, inputs, validation=False):
        outputs = {}
        features = self.models["encoder"](inputs["color"])
        outputs["topview"] = self.models["decoder"](features)
        if validation:
            return outputs
        losses = self.compute_losses(inputs, outputs)
        losses["loss_discr"] = torch.zeros(1)

        return outputs, losses

    def run_epoch(self):
        self.model_optimizer.step()
        self.model_optimizer_D.step()
        loss = {}
        loss["loss"], loss["loss_discr"] = 0.0, 0.0
        for batch_idx, inputs in enumerate(self.train_loader):
            outputs, losses = self.process_batch(inputs)
            self.model_optimizer.zero_grad()
            fake_pred = self.models["discriminator"](outputs["topview"])
            real_pred = self.models["discriminator"](inputs["discr"].float())
            loss_GAN = self.criterion_d(fake_pred, self.valid)
            loss_D = self.criterion_d(
                fake_pred, self.fake) + self.criterion_d(real_pred, self.valid)
            loss_G = self.opt.lambda_D * loss_GAN + losses["loss"]

            # Train Discriminator
            if self.epoch > self.opt.discr_train_epoch:
                loss_G.backward(retain_graph=True)
                self.model_optimizer.step()
                self.model_optimizer_D.zero_grad()
                loss_D.backward()
                self.model_optimizer_D.step()
            else:
                losses["loss"].backward()
                self.model_optimizer.step()

            loss["loss"] += losses["loss"].item()
            loss["loss_discr"] += loss_D.item()
        loss["loss"] /= len(self.train_loader)
        loss["loss_discr"] /= len(self.train_loader)
        return loss

    def compute_losses(self, inputs, outputs):
        losses = {}
        losses["loss"] = self.compute_topview_loss(
                                        outputs["topview"],
                                        inputs[self.opt.type],
                                        self.weight[self.opt.type])
        return losses

    def compute_topview_loss(self, outputs, true_top_view, weight):
        generated_top_view = outputs
        true_top_view = torch.squeeze(true_top_view.long())
        loss = nn.CrossEntropyLoss(weight=torch.Tensor([1., weight]))
        output = loss(generated_top_view, true_top_view)
        return output.mean()


def compute():
    torch.manual_seed(0)
    trainer = Trainer()
    batch = {
        "color": torch.randn(2, 3, 16, 16),
        "static": (torch.rand(2, 1, 16, 16) > 0.7).float(),
        "discr": (torch.rand(2, 2, 16, 16) > 0.5).float(),
    }
    trainer.train_loader = [batch]
    trainer.epoch = 6
    trainer.run_epoch()
    out = {}
    for key, model in trainer.models.items():
        out.update({key + "." + n: p.detach().clone() for n, p in model.named_parameters()})
    return out


if __name__ == "__main__":
    compute()
