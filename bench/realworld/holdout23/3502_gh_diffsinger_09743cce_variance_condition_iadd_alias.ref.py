# reference fix for 3502: DiffSinger commit 09743cce in the library module (3502helpers_diffsinger_toplevel_fixed.py):
# `pitch_cond = condition.clone()`, `var_cond = condition + self.pitch_embed(...)`, `var_cond += ...`, and the variance
# predictor run on var_cond.
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
ddpm = importlib.import_module("3502helpers_diffsinger_ddpm")
toplevel = importlib.import_module("3502helpers_diffsinger_toplevel_fixed")


def configure():
    ddpm.hparams.clear()
    ddpm.hparams.update({
        'hidden_size': 16, 'predict_dur': True, 'predict_pitch': True, 'predict_energy': True,
        'predict_breathiness': False, 'use_spk_id': False, 'use_melody_encoder': False,
        'timesteps': 50, 'K_step': 50, 'diff_decoder_type': 'wavenet',
        'pitch_prediction_args': {'pitd_norm_min': -8.0, 'pitd_norm_max': 8.0, 'pitd_clip_min': -12.0,
                                  'pitd_clip_max': 12.0, 'repeat_bins': 4, 'residual_layers': 2,
                                  'residual_channels': 8, 'dilation_cycle_length': 2},
        'energy_db_min': -96.0, 'energy_db_max': -12.0,
        'variances_prediction_args': {'total_repeat_bins': 4, 'residual_layers': 2, 'residual_channels': 8,
                                      'dilation_cycle_length': 2},
    })


def compute():
    torch.manual_seed(0)
    configure()
    model = toplevel.DiffSingerVariance(vocab_size=10)
    model.train()
    b, t_ph, t_s = 2, 4, 7
    txt_tokens = torch.tensor([[1, 2, 3, 4], [5, 6, 7, 0]])
    ph_dur = torch.tensor([[2., 2., 1., 2.], [3., 2., 2., 0.]])
    mel2ph = torch.tensor([[1, 1, 2, 2, 3, 4, 4], [1, 1, 1, 2, 2, 3, 3]])
    base_pitch = 60. + torch.randn(b, t_s)
    pitch = base_pitch + 0.5 * torch.randn(b, t_s)
    energy = -60. + 10. * torch.randn(b, t_s)
    pitch_retake = torch.tensor([[True, True, True, False, False, True, True], [False, True, True, True, True, False, False]])
    variance_retake = {'energy': torch.tensor([[True, False, True, True, True, False, False],
                                               [True, True, False, False, True, True, True]])}
    dur_pred, pitch_pred, variances_pred = model(
        txt_tokens, midi=None, ph2word=None, ph_dur=ph_dur, mel2ph=mel2ph, base_pitch=base_pitch, pitch=pitch,
        energy=energy, breathiness=None, pitch_retake=pitch_retake, variance_retake=variance_retake, infer=False)
    nonpadding = (mel2ph > 0).float()[:, None, None, :]
    dur_loss = F.mse_loss(dur_pred, torch.log(ph_dur + 1.0))
    pitch_x_recon, pitch_noise = pitch_pred
    pitch_loss = ((pitch_x_recon - pitch_noise) ** 2 * nonpadding).mean()
    var_x_recon, var_noise = variances_pred
    var_loss = ((var_x_recon - var_noise) ** 2 * nonpadding).mean()
    loss = dur_loss + pitch_loss + var_loss
    loss.backward()
    out = {"loss": loss.detach()}
    for name in ["fs2.encoder.weight", "fs2.txt_embed.weight", "pitch_retake_embed.weight", "base_pitch_embed.weight",
                 "pitch_embed.weight", "variance_embeds.energy.weight",
                 "pitch_predictor.denoise_fn.residual_layers.0.conditioner_projection.weight",
                 "variance_predictor.denoise_fn.residual_layers.1.conditioner_projection.weight",
                 "pitch_predictor.denoise_fn.output_projection.weight",
                 "variance_predictor.denoise_fn.output_projection.weight"]:
        p = dict(model.named_parameters())[name]
        out["grad." + name] = p.grad.clone()
    return out


if __name__ == "__main__":
    compute()
