# source: https://github.com/speechbrain/speechbrain/commit/f79b77f1431ecf617c70bc2fac2531d01f7d6820
# pattern: inplace_method
# codemod_fixable: yes
# error: A
# ref_semantics: differs
# SpeechBrain's Tacotron2 (speechbrain/lobes/models/Tacotron2.py): forward runs the postnet on the decoder's mel outputs
# (`mel_outputs_postnet = mel_outputs + self.postnet(mel_outputs)`) and then parse_output masks the padded frames in
# place, `mel_outputs.masked_fill_(mask, 0.0)`. The postnet's first convolution saved `mel_outputs` (a transposed view
# of the decoder's stacked frames), so training with padding masks fails at backward with "one of the variables needed
# for gradient computation has been modified by an inplace operation" (the "torch 1.11 pb" of the commit; the same
# statement is harmless under no_grad at inference). Commit f79b77f ("fix torch 1.11 pb with clone()", 2022-05-20)
# writes `mel_outputs.clone().masked_fill_(mask, 0.0)`, which discards the filled clone: the reference's decoder mel
# outputs are no longer masked (the fix is still the library's code today), hence ref_semantics: differs; a rewrite
# that keeps the masking (`mel_outputs = mel_outputs.masked_fill(mask, 0.0)`) computes the original's meaning and
# another loss than the reference.
# The library module is 2805helpers_speechbrain_tacotron2.py (ref: ..._fixed.py); its header names its stand-ins.
# Stand-ins here: a batch of two token sequences (lengths 5, 3) and 8-channel mel targets of 7 and 4 frames padded to
# 7, gate targets 1 from each last frame on, the model in training mode (BatchNorm, dropout) at small size, and one
# step of the library's Loss (mel MSE + gate BCE).
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
taco = importlib.import_module("2805helpers_speechbrain_tacotron2")


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
