# reference fix for 2808: PR #2586 (commit e2d9a9b) in the library module (2808helpers_diffusers_unet_2d_condition_fixed.py):
# `down_block_res_sample = down_block_res_sample + down_block_additional_residual`, `sample = sample + mid_block_additional_residual`.
import copy
import importlib
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
unet_mod = importlib.import_module("2808helpers_diffusers_unet_2d_condition_fixed")


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
