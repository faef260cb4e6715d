# source: https://github.com/wangyx240/High-Resolution-Image-Inpainting-GAN/issues/7
# pattern: optimizer_step_between
# codemod_fixable: no
# error: A
# ref_semantics: differs
# High-Resolution-Image-Inpainting-GAN (HiFill-style coarse-to-fine inpainting, WGAN/hinge training), trainer.py,
# WGAN_trainer: one generator forward gives first_out (coarse net) and second_out (refinement net); after the
# discriminator step, `first_MaskL1Loss.backward(retain_graph=True); optimizer_g1.step()` updates the coarse
# network (optimizer_g1 = Adam(generator.coarse.parameters())) in place, and then
# `loss = 0.5*opt.lambda_l1 * first_MaskL1Loss + opt.lambda_l1 * second_MaskL1Loss + GAN_Loss +
# second_PerceptualLoss * opt.lambda_perceptual; loss.backward()` goes back through the same coarse convolutions:
# "[torch.cuda.FloatTensor [1, 32, 3, 3]] is at version 2; expected version 1" (torch 1.8). The fix (the
# reporter's, no maintainer answer): run the generator forward twice per batch, `for repeated_idx in range(2):
# first_out, second_out = generator(img, mask) ...`, doing the first-stage L1 backward and optimizer_g1 step on the
# first pass and the rest of the iteration on the second. The second forward sees the stepped coarse weights, so
# the fix computes something else than the original (ref_semantics: differs).
# Stand-ins: the gated-conv coarse/refine generators, the patch discriminator and the VGG perceptual net are small
# conv nets with the same interfaces (generator.coarse, generator(img, mask) -> (first_out, second_out),
# discriminator(img, mask), a frozen perceptualnet); 16x16 images, random masks, two batches, one epoch.
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.coarse = nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.ELU(), nn.Conv2d(8, 3, 3, padding=1),
                                    nn.Sigmoid())
        self.refine = nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.ELU(), nn.Conv2d(8, 3, 3, padding=1),
                                    nn.Sigmoid())

    def forward(self, img, mask):
        first_masked_img = img * (1 - mask) + mask
        first_out = self.coarse(torch.cat((first_masked_img, mask), 1))
        second_masked_img = img * (1 - mask) + first_out * mask
        second_out = self.refine(torch.cat((second_masked_img, mask), 1))
        return first_out, second_out


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = nn.Sequential(nn.Conv2d(4, 8, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(8, 1, 4, 2, 1))

    def forward(self, img, mask):
        return self.block(torch.cat((img, mask), 1))


class Opt:
    lr_g = 1e-4
    lr_d = 4e-4
    lambda_l1 = 10.0
    lambda_perceptual = 1.0


def WGAN_trainer(opt, generator, discriminator, perceptualnet, dataloader):
    L1Loss = nn.L1Loss()
    RELU = nn.ReLU()
    optimizer_g1 = torch.optim.Adam(generator.coarse.parameters(), lr=opt.lr_g)
    optimizer_g = torch.optim.Adam(generator.parameters(), lr=opt.lr_g)
    optimizer_d = torch.optim.Adam(discriminator.parameters(), lr=opt.lr_d)
    for batch_idx, (img, mask) in enumerate(dataloader):
        # Generator output
        first_out, second_out = generator(img, mask)

        # forward propagation
        first_out_wholeimg = img * (1 - mask) + first_out * mask        # in range [0, 1]
        second_out_wholeimg = img * (1 - mask) + second_out * mask      # in range [0, 1]

        for wk in range(1):
            optimizer_d.zero_grad()
            fake_scalar = discriminator(second_out_wholeimg.detach(), mask)
            true_scalar = discriminator(img, mask)
            hinge_loss = torch.mean(RELU(1 - true_scalar)) + torch.mean(RELU(fake_scalar + 1))
            loss_D = hinge_loss
            loss_D.backward(retain_graph=True)
            optimizer_d.step()

        ### Train Generator
        # Mask L1 Loss
        first_MaskL1Loss = L1Loss(first_out_wholeimg, img)
        second_MaskL1Loss = L1Loss(second_out_wholeimg, img)
        # GAN Loss
        fake_scalar = discriminator(second_out_wholeimg, mask)
        GAN_Loss = - torch.mean(fake_scalar)

        optimizer_g1.zero_grad()
        first_MaskL1Loss.backward(retain_graph=True)
        optimizer_g1.step()

        optimizer_g.zero_grad()

        # Get the deep semantic feature maps, and compute Perceptual Loss
        img_featuremaps = perceptualnet(img)  # feature maps
        second_out_wholeimg_featuremaps = perceptualnet(second_out_wholeimg)
        second_PerceptualLoss = L1Loss(second_out_wholeimg_featuremaps, img_featuremaps)

        loss = 0.5 * opt.lambda_l1 * first_MaskL1Loss + opt.lambda_l1 * second_MaskL1Loss + GAN_Loss \
            + second_PerceptualLoss * opt.lambda_perceptual
        loss.backward()

        optimizer_g.step()


def compute():
    torch.manual_seed(0)
    generator, discriminator = Generator(), Discriminator()
    perceptualnet = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.ReLU())
    for p in perceptualnet.parameters():
        p.requires_grad = False
    dataloader = [(torch.rand(2, 3, 16, 16), (torch.rand(2, 1, 16, 16) > 0.7).float()) for _ in range(2)]
    WGAN_trainer(Opt(), generator, discriminator, perceptualnet, dataloader)
    out = {"G." + n: p.detach().clone() for n, p in generator.named_parameters()}
    out.update({"D." + n: p.detach().clone() for n, p in discriminator.named_parameters()})
    return out


if __name__ == "__main__":
    compute()
