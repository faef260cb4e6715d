# reference fix for 3206: segmentation_models.pytorch commit 2f001ba in the library module
# (3206helpers_smp_linknet_fixed.py): `x = x + skip` in DecoderBlock.forward.
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
linknet = importlib.import_module("3206helpers_smp_linknet_fixed")


def compute():
    torch.manual_seed(0)
    model = linknet.Linknet(encoder_name='tiny_resnet', encoder_weights=None, classes=1, activation='sigmoid')
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    x = torch.randn(2, 3, 32, 32)
    mask = (torch.rand(2, 1, 32, 32) > 0.5).float()
    optimizer.zero_grad()
    logits = model(x)
    loss = F.binary_cross_entropy_with_logits(logits, mask)
    loss.backward()
    decoder = model.decoder
    out = {
        "loss": loss.detach(),
        "logits": logits.detach(),
        "encoder.layer2.grad": model.encoder.layer2[0].weight.grad.clone(),
        "decoder.layer1.conv.grad": decoder.layer1.block[2].block[0].weight.grad.clone(),
        "decoder.layer4.tconv.grad": decoder.layer4.block[1].block[0].weight.grad.clone(),
        "final_conv.weight.grad": decoder.final_conv.weight.grad.clone(),
    }
    optimizer.step()
    out["final_conv.weight.after_step"] = decoder.final_conv.weight.detach().clone()
    return out


if __name__ == "__main__":
    compute()
