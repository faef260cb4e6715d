# source: https://github.com/qubvel/segmentation_models.pytorch/commit/2f001bafa274bcdb2968f6961817b9d3c8cdd480
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# segmentation_models.pytorch, its Linknet model (encoder + LinknetDecoder): every DecoderBlock runs
# Conv2dReLU -> TransposeX2 -> Conv2dReLU, the last ending with `nn.ReLU(inplace=True)` (which saves its output for
# the backward), and then adds the encoder's skip feature into that output in place, `x += skip`. Training a Linknet
# therefore raises "one of the variables needed for gradient computation has been modified by an inplace operation"
# at loss.backward(). Commit 2f001ba ("fix linknet sum operation", by the maintainer) writes `x = x + skip` (and
# rebuilds TransposeX2's layer list by appends, the same layers in the same order).
# The library modules are 3206helpers_smp_linknet.py (ref: ..._fixed.py) and 3206helpers_smp_base.py; their headers
# name the stand-ins (a tiny encoder in place of the torchvision ResNet, no ImageNet weights).
# Stand-ins here: one binary-segmentation training step on a batch of 2 RGB 32x32 images with random masks
# (BCE-with-logits loss, Adam step); returned: the loss, the logits, gradients of an encoder conv, two decoder convs
# and the final conv, and the final conv's weight after the step.
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
linknet = importlib.import_module("3206helpers_smp_linknet")


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
