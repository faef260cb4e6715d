# reference fix for 2805: commit f79b77f in the library module (2805helpers_speechbrain_tacotron2_fixed.py):
# `mel_outputs.clone().masked_fill_(mask, 0.0)` (the decoder's mel outputs are left unmasked).
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
taco = importlib.import_module("2805helpers_speechbrain_tacotron2_fixed")


def compute():
    torch.manual_seed(0)
    model = taco.Tacotron2()
    model.train()
    criterion = taco.Loss()

    inputs = torch.randint(1, 20, (2, 5))
    inputs[1, 3:] = 0
    input_lengths = torch.tensor([5, 3])
    output_lengths = torch.tensor([7, 4])
    mel_target = torch.randn(2, 8, 7)
    mel_target[1, :, 4:] = 0.0
    gate_target = torch.zeros(2, 7)
    gate_target[0, 6:] = 1.0
    gate_target[1, 3:] = 1.0

    outputs = model((inputs, input_lengths, mel_target, 7, output_lengths))
    loss = criterion(outputs, (mel_target, gate_target))
    loss.backward()
    return {
        "embedding.weight.grad": model.embedding.weight.grad,
        "decoder.proj.weight.grad": model.decoder.proj.weight.grad,
        "postnet.conv0.weight.grad": model.postnet.convolutions[0][0].conv.weight.grad,
        "mel_outputs": outputs[0].detach(),
        "loss": loss.detach(),
    }


if __name__ == "__main__":
    compute()
