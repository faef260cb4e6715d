# source: https://github.com/feiyuhuahuo/Anomaly_Prediction/issues/11
# pattern: optimizer_step_between
# codemod_fixable: no
# error: A
# ref_semantics: differs
# Anomaly_Prediction (future-frame prediction GAN) train.py: the generator loss contains
# `g_l = adversarial_loss(discriminator(G_frame))`; the loop then trains the discriminator (`D_l.backward()`,
# `optimizer_D.step()`) and only afterwards calls `G_l_t.backward()`, which goes back through the discriminator
# weights the step has changed (error since PyTorch 1.5). The maintainer's fix (commit 6295f5d, "fixed inplace check
# for module parameters since PyTorch1.5", announced in the issue; the thread's comment gives the same order):
# both backwards first, then `optimizer_D.step()` and `optimizer_G.step()`. The discriminator's step then also
# carries the gradient of the generator's adversarial term (ref_semantics: differs).
# losses.py as in the repo (Gradient_Loss builds its filters with torch.eye instead of numpy, on CPU).
# Stand-ins: the U-Net generator and the pixel discriminator are two-conv nets with the same inputs/outputs; the
# frozen optical-flow network is a fixed random conv whose outputs are detached as in the repo; one random clip of
# 5 frames (4 input + 1 target) at 16x16 instead of the dataloader; CUDA calls dropped.
import torch
import torch.nn as nn
import torch.nn.functional


class Flow_Loss(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, gen_flows, gt_flows):
        return torch.mean(torch.abs(gen_flows - gt_flows))


class Intensity_Loss(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, gen_frames, gt_frames):
        return torch.mean(torch.abs((gen_frames - gt_frames) ** 2))


class Gradient_Loss(nn.Module):
    def __init__(self, channels):
        super().__init__()

        pos = torch.eye(channels, dtype=torch.float32)
        neg = -1 * pos
        # Note: when doing conv2d, the channel order is different from tensorflow, so do permutation.
        self.filter_x = torch.stack((neg, pos)).unsqueeze(0).permute(3, 2, 0, 1)
        self.filter_y = torch.stack((pos.unsqueeze(0), neg.unsqueeze(0))).permute(3, 2, 0, 1)

    def forward(self, gen_frames, gt_frames):
        # Do padding to match the  result of the original tensorflow implementation
        gen_frames_x = nn.functional.pad(gen_frames, [0, 1, 0, 0])
        gen_frames_y = nn.functional.pad(gen_frames, [0, 0, 0, 1])
        gt_frames_x = nn.functional.pad(gt_frames, [0, 1, 0, 0])
        gt_frames_y = nn.functional.pad(gt_frames, [0, 0, 0, 1])

        gen_dx = torch.abs(nn.functional.conv2d(gen_frames_x, self.filter_x))
        gen_dy = torch.abs(nn.functional.conv2d(gen_frames_y, self.filter_y))
        gt_dx = torch.abs(nn.functional.conv2d(gt_frames_x, self.filter_x))
        gt_dy = torch.abs(nn.functional.conv2d(gt_frames_y, self.filter_y))

        grad_diff_x = torch.abs(gt_dx - gen_dx)
        grad_diff_y = torch.abs(gt_dy - gen_dy)

        return torch.mean(grad_diff_x + grad_diff_y)


class Adversarial_Loss(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, fake_outputs):
        # TODO: compare with torch.nn.MSELoss ?
        return torch.mean((fake_outputs - 1) ** 2 / 2)


class Discriminate_Loss(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, real_outputs, fake_outputs):
        return torch.mean((real_outputs - 1) ** 2 / 2) + torch.mean(fake_outputs ** 2 / 2)


class UNet(nn.Module):
    # stand-in for models/unet.py: 12 input channels (4 frames), 3 output channels
    def __init__(self, input_channels=12, output_channel=3):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(input_channels, 8, 3, padding=1), nn.ReLU(),
                                 nn.Conv2d(8, output_channel, 3, padding=1))

    def forward(self, x):
        return torch.tanh(self.net(x))


class PixelDiscriminator(nn.Module):
    # stand-in for models/pix2pix_networks.py PixelDiscriminator
    def __init__(self, input_nc=3):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(input_nc, 8, 1), nn.LeakyReLU(0.2),
                                 nn.Conv2d(8, 1, 1))

    def forward(self, x):
        return self.net(x)


def train_step(generator, discriminator, flow_net, optimizer_G, optimizer_D, clips):
    intensity_loss = Intensity_Loss()
    gradient_loss = Gradient_Loss(3)
    adversarial_loss = Adversarial_Loss()
    discriminate_loss = Discriminate_Loss()
    flow_loss = Flow_Loss()

    input_frames = clips[:, 0:12, :, :]  # (n, 12, 256, 256)
    target_frame = clips[:, 12:15, :, :]  # (n, 3, 256, 256)
    input_last = input_frames[:, 9:12, :, :]  # use for flow_loss

    G_frame = generator(input_frames)

    gt_flow_input = torch.cat([input_last, target_frame], 1)
    pred_flow_input = torch.cat([input_last, G_frame], 1)
    # No need to train flow_net, use .detach() to cut off gradients.
    flow_gt = flow_net(gt_flow_input).detach()
    flow_pred = flow_net(pred_flow_input).detach()

    inte_l = intensity_loss(G_frame, target_frame)
    grad_l = gradient_loss(G_frame, target_frame)
    fl_l = flow_loss(flow_pred, flow_gt)
    g_l = adversarial_loss(discriminator(G_frame))
    G_l_t = 1. * inte_l + 1. * grad_l + 2. * fl_l + 0.05 * g_l

    # Train discriminator
    # When training discriminator, don't train generator, so use .detach() to cut off gradients.
    D_l = discriminate_loss(discriminator(target_frame), discriminator(G_frame.detach()))
    optimizer_D.zero_grad()
    D_l.backward()
    optimizer_D.step()

    # Train generator
    optimizer_G.zero_grad()
    G_l_t.backward()
    optimizer_G.step()


def compute():
    torch.manual_seed(0)
    generator = UNet(input_channels=12, output_channel=3)
    discriminator = PixelDiscriminator(input_nc=3)
    flow_net = nn.Conv2d(6, 2, 3, padding=1)
    flow_net.requires_grad_(False)
    optimizer_G = torch.optim.Adam(generator.parameters(), lr=0.0002)
    optimizer_D = torch.optim.Adam(discriminator.parameters(), lr=0.00002)
    clips = torch.rand(2, 15, 16, 16) * 2 - 1
    train_step(generator, discriminator, flow_net, optimizer_G, optimizer_D, clips)
    out = {"G." + n: p.detach().clone() for n, p in generator.named_parameters()}
    out.update({"D." + n: p.detach().clone() for n, p in discriminator.named_parameters()})
    return out


if __name__ == "__main__":
    compute()
