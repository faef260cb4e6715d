# Library module for case 3502 (reference: the fix 09743cce applied): openvpi/DiffSinger modules/toplevel.py at 09743cce (DiffSingerVariance), with
# ParameterAdaptorModule (modules/fastspeech/param_adaptor.py) and the XavierUniformInitLinear /
# NormalInitEmbedding layers (modules/commons/common_layers.py) it uses. DiffSingerVariance.__init__ / forward are
# the source's for the configuration of the case (no speaker embedding, no melody encoder; duration, pitch and
# energy predicted). Stand-ins: FastSpeech2Variance (the phoneme encoder with its duration predictor) is a token
# embedding plus a linear layer and a linear duration head; the RhythmRegulator / LengthRegulator (inference only)
# are left out.
from typing import Dict

import importlib
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
ddpm = importlib.import_module("3502helpers_diffsinger_ddpm")
hparams = ddpm.hparams
PitchDiffusion = ddpm.PitchDiffusion
MultiVarianceDiffusion = ddpm.MultiVarianceDiffusion


class Linear(nn.Linear):  # XavierUniformInitLinear
    def __init__(self, in_features, out_features, bias=True):
        super().__init__(in_features, out_features, bias)
        nn.init.xavier_uniform_(self.weight)
        if bias:
            nn.init.constant_(self.bias, 0.)


class Embedding(nn.Embedding):  # NormalInitEmbedding
    def __init__(self, num_embeddings, embedding_dim, padding_idx=None):
        super().__init__(num_embeddings, embedding_dim, padding_idx=padding_idx)
        nn.init.normal_(self.weight, mean=0, std=embedding_dim ** -0.5)
        if padding_idx is not None:
            nn.init.constant_(self.weight[padding_idx], 0)


class FastSpeech2Variance(nn.Module):
    """Stand-in: token embedding + one linear layer (encoder_out) and a linear duration head (dur_pred_out)."""

    def __init__(self, vocab_size):
        super().__init__()
        self.txt_embed = Embedding(vocab_size, hparams['hidden_size'], 0)
        self.encoder = Linear(hparams['hidden_size'], hparams['hidden_size'])
        self.dur_predictor = Linear(hparams['hidden_size'], 1)

    def forward(self, txt_tokens, midi, ph2word, ph_dur=None, word_dur=None, spk_embed=None, infer=True):
        encoder_out = torch.tanh(self.encoder(self.txt_embed(txt_tokens)))
        dur_pred_out = self.dur_predictor(encoder_out).squeeze(-1)
        return encoder_out, dur_pred_out


class ParameterAdaptorModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.variance_prediction_list = []
        self.predict_energy = hparams.get('predict_energy', False)
        self.predict_breathiness = hparams.get('predict_breathiness', False)
        if self.predict_energy:
            self.variance_prediction_list.append('energy')
        if self.predict_breathiness:
            self.variance_prediction_list.append('breathiness')
        self.predict_variances = len(self.variance_prediction_list) > 0

    def build_adaptor(self, cls=MultiVarianceDiffusion):
        ranges = []
        clamps = []
        if self.predict_energy:
            ranges.append((hparams['energy_db_min'], hparams['energy_db_max']))
            clamps.append((hparams['energy_db_min'], 0.))
        if self.predict_breathiness:
            ranges.append((hparams['breathiness_db_min'], hparams['breathiness_db_max']))
            clamps.append((hparams['breathiness_db_min'], 0.))
        variances_hparams = hparams['variances_prediction_args']
        total_repeat_bins = variances_hparams['total_repeat_bins']
        repeat_bins = total_repeat_bins // len(self.variance_prediction_list)
        return cls(ranges=ranges, clamps=clamps, repeat_bins=repeat_bins, timesteps=hparams['timesteps'],
                   k_step=hparams['K_step'], denoiser_type=hparams['diff_decoder_type'],
                   denoiser_args={
                       'n_layers': variances_hparams['residual_layers'],
                       'n_chans': variances_hparams['residual_channels'],
                       'n_dilates': variances_hparams['dilation_cycle_length'],
                   })

    def collect_variance_inputs(self, **kwargs) -> list:
        return [kwargs.get(name) for name in self.variance_prediction_list]

    def collect_variance_outputs(self, variances) -> dict:
        return {name: pred for name, pred in zip(self.variance_prediction_list, variances)}


class DiffSingerVariance(ParameterAdaptorModule):
    def __init__(self, vocab_size):
        ParameterAdaptorModule.__init__(self)
        self.predict_dur = hparams['predict_dur']
        self.predict_pitch = hparams['predict_pitch']
        self.use_spk_id = hparams['use_spk_id']
        if self.use_spk_id:
            self.spk_embed = Embedding(hparams['num_spk'], hparams['hidden_size'])
        self.fs2 = FastSpeech2Variance(vocab_size=vocab_size)

        if self.predict_pitch:
            self.use_melody_encoder = hparams.get('use_melody_encoder', False)
            if self.use_melody_encoder:
                raise NotImplementedError('the melody encoder is not part of this reduction')
            else:
                self.base_pitch_embed = Linear(1, hparams['hidden_size'])
            self.pitch_retake_embed = Embedding(2, hparams['hidden_size'])
            pitch_hparams = hparams['pitch_prediction_args']
            self.pitch_predictor = PitchDiffusion(
                vmin=pitch_hparams['pitd_norm_min'], vmax=pitch_hparams['pitd_norm_max'],
                cmin=pitch_hparams['pitd_clip_min'], cmax=pitch_hparams['pitd_clip_max'],
                repeat_bins=pitch_hparams['repeat_bins'], timesteps=hparams['timesteps'], k_step=hparams['K_step'],
                denoiser_type=hparams['diff_decoder_type'],
                denoiser_args={
                    'n_layers': pitch_hparams['residual_layers'],
                    'n_chans': pitch_hparams['residual_channels'],
                    'n_dilates': pitch_hparams['dilation_cycle_length'],
                })

        if self.predict_variances:
            self.pitch_embed = Linear(1, hparams['hidden_size'])
            self.variance_embeds = nn.ModuleDict({
                v_name: Linear(1, hparams['hidden_size']) for v_name in self.variance_prediction_list
            })
            self.variance_predictor = self.build_adaptor()

    def forward(self, txt_tokens, midi, ph2word, ph_dur=None, word_dur=None, mel2ph=None,
                note_midi=None, note_rest=None, note_dur=None, note_glide=None, mel2note=None,
                base_pitch=None, pitch=None, pitch_expr=None, pitch_retake=None,
                variance_retake: Dict[str, Tensor] = None, spk_id=None, infer=True, **kwargs):
        ph_spk_embed = spk_embed = None
        encoder_out, dur_pred_out = self.fs2(txt_tokens, midi=midi, ph2word=ph2word, ph_dur=ph_dur,
                                             word_dur=word_dur, spk_embed=ph_spk_embed, infer=infer)

        if not self.predict_pitch and not self.predict_variances:
            return dur_pred_out, None, ({} if infer else None)

        encoder_out = F.pad(encoder_out, [0, 0, 1, 0])
        mel2ph_ = mel2ph[..., None].repeat([1, 1, hparams['hidden_size']])
        condition = torch.gather(encoder_out, 1, mel2ph_)

        if self.use_spk_id:
            condition += spk_embed

        if self.predict_pitch:
            pitch_cond = condition.clone()  # preserve the original tensor to avoid further inplace operations

            retake_unset = pitch_retake is None
            if retake_unset:
                pitch_retake = torch.ones_like(mel2ph, dtype=torch.bool)

            if pitch_expr is None:
                pitch_retake_embed = self.pitch_retake_embed(pitch_retake.long())
            else:
                retake_true_embed = self.pitch_retake_embed(torch.ones(1, 1, dtype=torch.long))
                retake_false_embed = self.pitch_retake_embed(torch.zeros(1, 1, dtype=torch.long))
                pitch_expr = (pitch_expr * pitch_retake)[:, :, None]  # [B, T, 1]
                pitch_retake_embed = pitch_expr * retake_true_embed + (1. - pitch_expr) * retake_false_embed

            pitch_cond += pitch_retake_embed
            base_pitch = base_pitch * pitch_retake + pitch * ~pitch_retake
            pitch_cond += self.base_pitch_embed(base_pitch[:, :, None])

            if infer:
                pitch_pred_out = self.pitch_predictor(pitch_cond, infer=True)
            else:
                pitch_pred_out = self.pitch_predictor(pitch_cond, pitch - base_pitch, infer=False)
        else:
            pitch_pred_out = None

        if not self.predict_variances:
            return dur_pred_out, pitch_pred_out, ({} if infer else None)

        if pitch is None:
            pitch = base_pitch + pitch_pred_out
        var_cond = condition + self.pitch_embed(pitch[:, :, None])

        variance_inputs = self.collect_variance_inputs(**kwargs)
        if variance_retake is not None:
            variance_embeds = [
                self.variance_embeds[v_name](v_input[:, :, None]) * ~variance_retake[v_name][:, :, None]
                for v_name, v_input in zip(self.variance_prediction_list, variance_inputs)
            ]
            var_cond += torch.stack(variance_embeds, dim=-1).sum(-1)

        variance_outputs = self.variance_predictor(var_cond, variance_inputs, infer=infer)

        if infer:
            variances_pred_out = self.collect_variance_outputs(variance_outputs)
        else:
            variances_pred_out = variance_outputs

        return dur_pred_out, pitch_pred_out, variances_pred_out
