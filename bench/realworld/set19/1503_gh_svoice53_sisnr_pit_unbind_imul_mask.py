# source: https://github.com/facebookresearch/svoice/issues/53
# pattern: augassign
# codemod_fixable: yes
# error: C
# ref_semantics: same
# svoice (speech separation), svoice/solver.py `_run_one_epoch` and svoice/models/sisnr_loss.py: the model returns
# `torch.stack(outputs)` (one separated estimate per RNN block), the solver iterates over it
# (`for c_idx, est_src in enumerate(estimate_source)`, which unbinds the stack) and hands each estimate to
# `cal_loss`, whose `cal_si_snr_with_pit` masks the padding in place, `estimate_source *= mask`: "Output 0 of
# UnbindBackward is a view and is being modified inplace. This view is the output of a function that returns
# multiple views..." (torch 1.9). Fix (the reporter's, issue closed as fixed): `estimate_source =
# estimate_source.clone()` before the in-place mask, in sisnr_loss.py.
# The library module is 1503helpers_svoice_sisnr_loss.py (ref: 1503helpers_svoice_sisnr_loss_fixed.py).
# Stand-ins: `SWaveStandIn` for SWave (an encoder conv, two "blocks" of 1x1 convs, the decoder reduced to a
# linear map back to the time axis, outputs stacked as in SWave.forward); the solver loop of `_run_one_epoch`
# without data loader, logging, distributed averaging, anomaly mode and gradient clipping; one training step.
import importlib
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sisnr_loss = importlib.import_module("1503helpers_svoice_sisnr_loss")
cal_loss = sisnr_loss.cal_loss


class SWaveStandIn(nn.Module):
    def __init__(self, C=2, N=8, L=4, R=2):
        super().__init__()
        self.C, self.N, self.L = C, N, L
        self.encoder = nn.Conv1d(1, N, kernel_size=L, stride=L // 2, bias=False)
        self.blocks = nn.ModuleList([nn.Conv1d(N, N * C, 1) for _ in range(R)])
        self.decoder = nn.Linear(N, L // 2)

    def forward(self, mixture):
        mixture_w = F.relu(self.encoder(torch.unsqueeze(mixture, 1)))
        T_mix = mixture.size(-1)
        outputs = []
        h = mixture_w
        for block in self.blocks:
            out = block(h).view(mixture.shape[0], self.C, self.N, -1)
            h = torch.tanh(out.mean(1))
            output_ii = self.decoder(out.transpose(2, 3)).flatten(2)
            T_est = output_ii.size(-1)
            output_ii = F.pad(output_ii, (0, T_mix - T_est))
            outputs.append(output_ii)
        return torch.stack(outputs)


def compute():
    torch.manual_seed(0)
    model = SWaveStandIn()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    B, C, T = 3, 2, 32
    sources = torch.randn(B, C, T)
    lengths = torch.tensor([32, 28, 24])
    mixture = sources.sum(1)

    estimate_source = model(mixture)
    loss = 0
    cnt = len(estimate_source)
    # apply a loss function after each layer
    for c_idx, est_src in enumerate(estimate_source):
        coeff = ((c_idx + 1) * (1 / cnt))
        sisnr_loss_value, snr, est_src, reorder_est_src = cal_loss(sources, est_src, lengths)
        loss += (coeff * sisnr_loss_value)
    loss /= len(estimate_source)

    optimizer.zero_grad()
    loss.backward()
    grads = {name: p.grad.clone() for name, p in model.named_parameters()}
    optimizer.step()
    grads["loss"] = loss.detach()
    grads["encoder_after_step"] = model.encoder.weight.detach().clone()
    return grads


if __name__ == "__main__":
    compute()
