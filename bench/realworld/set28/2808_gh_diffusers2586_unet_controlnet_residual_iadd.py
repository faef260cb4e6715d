# source: https://github.com/huggingface/diffusers/pull/2586 (commit e2d9a9bea071d4826a231c0a933351949a837958)
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# diffusers' UNet2DConditionModel.forward (src/diffusers/models/unet_2d_condition.py) takes ControlNet's residuals and
# adds them to the skip connections in place: `down_block_res_sample += down_block_additional_residual` for every
# tensor of `down_block_res_samples` and `sample += mid_block_additional_residual` after the mid block. The skip
# tensors are also the inputs of the next blocks (conv_in's output feeds the first resnet, whose GroupNorm saved it),
# so when the UNet itself is trained together with a ControlNet the backward fails with "one of the variables needed
# for gradient computation has been modified by an inplace operation" (the PR: "which will cause backprop errors when
# training"). PR #2586 (commit e2d9a9b) makes both additions out of place (and the copy in versatile_diffusion).
# The library module is 2808helpers_diffusers_unet_2d_condition.py (ref: ..._fixed.py); its header names its
# stand-ins. Stand-ins here: a two-level UNet at small size (channels 8 / 16, no cross attention), a ControlNet made as
# ControlNetModel.from_unet makes it (copies of conv_in and the down blocks and mid block, a conditioning-image
# embedding conv added after conv_in, zero-initialised 1x1 "zero convs" on every skip tensor and on the mid block
# output), one noise-prediction MSE step on random latents, noise and conditioning images, both models trained.
import copy
import importlib
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
unet_mod = importlib.import_module("2808helpers_diffusers_unet_2d_condition")


def zero_module(module):
    for p in module.parameters():
        nn.init.zeros_(p)
    return module


class ControlNetModel(nn.Module):
    def __init__(self, unet, conditioning_channels=3):
        super().__init__()
        c0 = unet.conv_in.out_channels
        self.time_proj = copy.deepcopy(unet.time_proj)
        self.time_embedding = copy.deepcopy(unet.time_embedding)
        self.conv_in = copy.deepcopy(unet.conv_in)
        self.controlnet_cond_embedding = nn.Conv2d(conditioning_channels, c0, 3, padding=1)
        self.down_blocks = copy.deepcopy(unet.down_blocks)
        self.mid_block = copy.deepcopy(unet.mid_block)
        channels = [c0]
        for block in self.down_blocks:
            out = block.resnets[-1].conv2.out_channels
            channels += [out] * len(block.resnets)
            if block.downsamplers is not None:
                channels.append(out)
        self.controlnet_down_blocks = nn.ModuleList([zero_module(nn.Conv2d(c, c, 1)) for c in channels])
        self.controlnet_mid_block = zero_module(nn.Conv2d(channels[-1], channels[-1], 1))

    def forward(self, sample, timestep, controlnet_cond):
        emb = self.time_embedding(self.time_proj(timestep.expand(sample.shape[0])))
        sample = self.conv_in(sample) + self.controlnet_cond_embedding(controlnet_cond)
        down_block_res_samples = (sample,)
        for downsample_block in self.down_blocks:
            sample, res_samples = downsample_block(hidden_states=sample, temb=emb)
            down_block_res_samples += res_samples
        sample = self.mid_block(sample, emb)
        down = [zc(s) for zc, s in zip(self.controlnet_down_blocks, down_block_res_samples)]
        return down, self.controlnet_mid_block(sample)


def compute():
    torch.manual_seed(0)
    unet = unet_mod.UNet2DConditionModel()
    controlnet = ControlNetModel(unet)
    latents = torch.randn(2, 4, 8, 8)
    noise = torch.randn(2, 4, 8, 8)
    cond_image = torch.rand(2, 3, 8, 8)
    timestep = torch.tensor([10])
    noisy = latents + 0.5 * noise

    down_res, mid_res = controlnet(noisy, timestep, cond_image)
    model_pred = unet(noisy, timestep, down_block_additional_residuals=down_res,
                      mid_block_additional_residual=mid_res)[0]
    loss = F.mse_loss(model_pred, noise)
    loss.backward()
    return {
        "unet.conv_in.weight.grad": unet.conv_in.weight.grad,
        "unet.up0.resnet0.conv1.weight.grad": unet.up_blocks[0].resnets[0].conv1.weight.grad,
        "controlnet.zero0.weight.grad": controlnet.controlnet_down_blocks[0].weight.grad,
        "controlnet.mid.weight.grad": controlnet.controlnet_mid_block.weight.grad,
        "loss": loss.detach(),
    }


if __name__ == "__main__":
    compute()
