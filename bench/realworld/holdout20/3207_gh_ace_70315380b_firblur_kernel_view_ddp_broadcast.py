# source: https://github.com/ai2cm/ace/commit/70315380bfec9ceacd23e38a7d4268c2852332c2
# pattern: inplace_method
# codemod_fixable: yes
# error: A
# ref_semantics: same
# ACE (Ai2 climate emulator), its video downscaling diffusion model: VideoUNet low-passes feature maps with FIRBlur,
# whose forward convolves with `w = self.kernel.expand(c, 1, 1, 3, 3)`, a view of the registered `kernel` buffer that
# conv3d saves for its backward. Training runs under DistributedDataParallel (broadcast_buffers=True: every forward
# first copies rank 0's buffers into each rank's buffers, in place) and, with the marginal-consistency loss, runs the
# model twice (full frame set, then a frame subset) before one backward. The second forward's buffer sync bumps the
# kernel's version, so the backward raises "one of the variables needed for gradient computation has been modified by
# an inplace operation" for the first pass's conv weight. Commit 70315380b ("Fix DDP in-place buffer error in FIRBlur
# under two-pass consistency loss") materializes the weight: `.expand(...).contiguous()`.
# The library module is 3207helpers_ace_video_modules.py (ref: ..._fixed.py); its header names its stand-ins.
# Stand-ins here: DDP itself (one process cannot show it: with world_size 1 DDP writes no buffer) is a wrapper whose
# forward copies rank 0's buffer values into the module's buffers in place under no_grad before calling the module, as
# a non-root rank's buffer broadcast does; the maintainers' regression test simulates the sync the same way
# (`with torch.no_grad(): blur.kernel.copy_(blur.kernel)`). VideoDiffusionModel.train_on_batch keeps the two passes
# and the loss terms of the source (diffusion loss, subset loss, consistency penalty) without the calendar inputs,
# the random training subsets and the normalization; the optimizer's accumulate_loss is a plain backward and step.
# Returned: the three losses, the full-pass prediction and gradients of the first conv, a decoder conv and the output
# conv, and the output conv's weight after one SGD step.
import importlib
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
video_modules = importlib.import_module("3207helpers_ace_video_modules")


class DistributedDataParallel(nn.Module):
    """Stand-in for torch's DDP with broadcast_buffers=True, seen from a non-root rank."""

    def __init__(self, module, rank0_buffers):
        super().__init__()
        self.module = module
        self._rank0_buffers = rank0_buffers

    def _sync_buffers(self):
        with torch.no_grad():
            for buf, value in zip(self.module.buffers(), self._rank0_buffers):
                buf.copy_(value)

    def forward(self, *inputs, **kwargs):
        self._sync_buffers()
        return self.module(*inputs, **kwargs)


def _linear_interp_endpoints(clip, tau):
    first, last = clip[:, :, :1], clip[:, :, -1:]
    return first + (last - first) * tau.reshape(1, 1, -1, 1, 1)


def _interior_mask(n_times, device):
    mask = torch.ones(1, 1, n_times, 1, 1, device=device)
    mask[:, :, 0] = 0.0
    mask[:, :, -1] = 0.0
    return mask


class VideoDiffusionModel:
    def __init__(self, module, sigma_data, marginal_consistency_weight):
        self.module = module
        self.sigma_data = sigma_data
        self._marginal_consistency_weight = marginal_consistency_weight

    def train_on_batch(self, clip, optimizer):
        batch_size, _, n_times, _, _ = clip.shape
        tau = torch.linspace(0, 1, n_times)
        baseline = _linear_interp_endpoints(clip, tau)
        residual = clip - baseline  # ~0 at endpoints by construction

        interior = _interior_mask(n_times, clip.device)
        condition = torch.cat([clip * (1 - interior), (1 - interior).expand(batch_size, 1, -1, *clip.shape[-2:])],
                              dim=1)

        sigma = torch.exp(torch.randn(batch_size) * 1.2 - 1.2)
        sigma = sigma.reshape(batch_size, -1, 1, 1, 1)
        noise = torch.randn_like(residual)
        noised = residual + noise * sigma * interior

        denoised = self.module(noised, condition, sigma, None, None, None)

        weight = (sigma**2 + self.sigma_data**2) / (sigma * self.sigma_data) ** 2
        sq_err = (denoised - residual) ** 2 * interior
        n_interior_elems = interior.expand_as(sq_err).sum()
        loss = (weight * sq_err).sum() / n_interior_elems

        # Marginal-consistency loss: a second pass on a strict subset of the interior frames
        sub = torch.tensor([0, 1, 3, n_times - 1])
        interior_s = _interior_mask(int(sub.numel()), clip.device)
        denoised_s = self.module(noised.index_select(2, sub), condition.index_select(2, sub), sigma, None, None,
                                 None)
        residual_s = residual.index_select(2, sub)
        n_interior_s = interior_s.expand_as(residual_s).sum()
        sq_err_s = (denoised_s - residual_s) ** 2 * interior_s
        dsm_sub = (weight * sq_err_s).sum() / n_interior_s
        diff = (denoised.index_select(2, sub) - denoised_s) ** 2 * interior_s
        marginal_loss = diff.sum() / n_interior_s
        total_loss = loss + dsm_sub + self._marginal_consistency_weight * marginal_loss

        optimizer.zero_grad()
        total_loss.backward()
        optimizer.step()
        return loss.detach(), dsm_sub.detach(), marginal_loss.detach(), denoised.detach()


def compute():
    torch.manual_seed(0)
    n_channels = 2
    unet = video_modules.VideoUNet(in_channels=2 * n_channels + 1 + n_channels, out_channels=n_channels,
                                   model_channels=4)
    precond = video_modules.VideoEDMPrecond(unet, sigma_data=1.0)
    rank0_buffers = [b.detach().clone() for b in precond.buffers()]
    ddp = DistributedDataParallel(precond, rank0_buffers)
    model = VideoDiffusionModel(ddp, sigma_data=1.0, marginal_consistency_weight=0.5)
    optimizer = torch.optim.SGD(precond.parameters(), lr=0.01)

    clip = torch.randn(2, n_channels, 6, 8, 8)
    loss, dsm_sub, marginal_loss, denoised = model.train_on_batch(clip, optimizer)
    return {
        "loss": loss,
        "dsm_sub": dsm_sub,
        "marginal_loss": marginal_loss,
        "denoised": denoised,
        "in_conv.grad": unet.in_conv.conv.weight.grad.clone(),
        "dec0.grad": unet.dec_blocks[0].conv.conv.weight.grad.clone(),
        "out_conv.grad": unet.out_conv.conv.weight.grad.clone(),
        "out_conv.after_step": unet.out_conv.conv.weight.detach().clone(),
    }


if __name__ == "__main__":
    compute()
