# source: https://github.com/thorinf/simple-diffusion-lm/issues/2
# pattern: inplace_method
# codemod_fixable: yes
# error: A
# ref_semantics: same
# Continuous diffusion language model (thorinf/simple-diffusion-lm, pytorch/train.py). The reporter changed
# DiffusionLM.compute_loss to mask the token ids for the reconstruction loss in place,
# `input_ids.masked_fill_(torch.logical_not(diff_mask), -100)`, after the same ids went through nn.Embedding, whose
# backward keeps the indices ("[torch.cuda.LongTensor [512, 50]] is at version 1; expected version 0"). Working
# code from the thread: `input_ids = input_ids.data.clone()` before the masked_fill_ (the repository itself uses the
# out-of-place `masked_fill`). The Transformer estimator (rotary attention, FiLM) is a small MLP stand-in with the
# same call signature; Diffusion and EmbeddingAutoEncoder are the repository's.
import math
import random

import torch
import torch.nn as nn
import torch.nn.functional as F


class TransformerModel(nn.Module):
    """Stand-in for the repository's rotary Transformer estimator: same inputs/outputs."""

    def __init__(self, input_dim, target_dim, model_dim, num_layers=4, learned_sinusoidal_dim=128, dropout_prob=0.0):
        super().__init__()
        self.time_mlp = nn.Sequential(nn.Linear(1, model_dim), nn.GELU())
        self.project_in = nn.Linear(input_dim, model_dim)
        self.project_out = nn.Linear(model_dim, target_dim)

    def forward(self, x, t, length_mask=None):
        h = self.project_in(x) + self.time_mlp(t[:, None])[:, None, :]
        return self.project_out(F.gelu(h))


class EmbeddingAutoEncoder(nn.Module):
    def __init__(self, num_embeddings, embedding_dim, interpolate_temperature=1.0, dropout_prob=0.0):
        super(EmbeddingAutoEncoder, self).__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.interpolate_temperature = interpolate_temperature
        self.embedding = nn.Embedding(
            num_embeddings=self.num_embeddings,
            embedding_dim=self.embedding_dim
        )
        nn.init.normal_(self.embedding.weight, std=0.001)

        self.dropout = nn.Dropout(p=dropout_prob)
        self.lm_head = nn.Linear(self.embedding_dim, num_embeddings)

    def get_embeddings(self, w):
        x = self.embedding(w)
        x = F.normalize(x, dim=-1) * math.sqrt(self.embedding_dim)
        return x

    def get_logits(self, x):
        x = self.dropout(x)
        x = self.lm_head(x)
        return x

    def interpolate(self, x):
        logits = self.get_logits(x) / self.interpolate_temperature
        weights = logits.softmax(dim=-1)
        interpolated = torch.einsum('nle,ed->nld', weights, self.embedding.weight)
        interpolated = F.normalize(interpolated, dim=-1) * math.sqrt(self.embedding_dim)
        return interpolated


class Diffusion:
    def __init__(self, estimator: nn.Module, interpolate=None, self_conditioning=True, normalize=False,
                 sampling_method='ddpm'):
        super(Diffusion).__init__()
        self.estimator = estimator
        self.interpolate = interpolate
        self.self_conditioning = self_conditioning
        self.normalize = normalize
        self.sampling_method = sampling_method

    def gamma(self, t, ns=0.0002, ds=0.00025):
        return torch.cos(((t + ns) / (1 + ds)) * math.pi / 2) ** 2

    def forward_diffusion(self, x_0, t):
        time = t.unsqueeze(1).unsqueeze(1)
        mean_weight = torch.sqrt(self.gamma(time))
        std = torch.sqrt(1 - self.gamma(time))
        z = torch.randn_like(x_0)
        x_t = (mean_weight * x_0) + (z * std)
        return x_t, z, std

    def loss_t(self, x_0, t, len_mask, cond_mask):
        x_t, z, std = self.forward_diffusion(x_0, t)

        if self.normalize:
            x_t = x_t / x_t.std(dim=-1, keepdim=True)

        x_noised = torch.where(cond_mask.unsqueeze(-1), torch.zeros_like(x_t), x_t)
        x_cond = torch.where(cond_mask.unsqueeze(-1), x_0, torch.zeros_like(x_0))

        x_estimation = torch.zeros_like(x_t)
        if self.self_conditioning and random.uniform(0, 1) < 0.5:
            x_estimation = self.estimator(torch.cat([x_noised, x_cond, x_estimation], dim=-1), t, len_mask)

            if self.interpolate is not None:
                x_estimation = self.interpolate(x_estimation)

            x_estimation = torch.where(cond_mask.unsqueeze(-1), torch.zeros_like(x_estimation), x_estimation)
            x_estimation = x_estimation.detach()

        x_0_estimation = self.estimator(torch.cat([x_noised, x_cond, x_estimation], dim=-1), t, len_mask)

        loss = (x_0 - x_0_estimation) ** 2.0
        return loss, x_0_estimation, t

    def compute_loss(self, x_0, len_mask, cond_mask, offset=1e-5):
        t = torch.rand(x_0.shape[0], dtype=x_0.dtype, device=x_0.device, requires_grad=False)
        t = torch.clamp(t, offset, 1.0 - offset)
        loss, x_0_estimation, t = self.loss_t(x_0, t, len_mask, cond_mask)
        return loss, x_0_estimation


class DiffusionLM(nn.Module):
    def __init__(self, num_embedding=1000, embedding_dim=64, model_dim=512, num_layers=8, dropout_prob=0.2):
        super(DiffusionLM, self).__init__()
        self.num_embedding = num_embedding
        self.embedding_dim = embedding_dim
        self.model_dim = model_dim
        self.num_layers = num_layers
        self.embedding_grad_scale = 1.0

        self.embedding_autoenc = EmbeddingAutoEncoder(self.num_embedding, self.embedding_dim)

        self.estimator = TransformerModel(
            input_dim=self.embedding_dim * 3,
            target_dim=self.embedding_dim,
            model_dim=self.model_dim,
            num_layers=num_layers,
            dropout_prob=dropout_prob
        )
        self.diffusion = Diffusion(
            estimator=self.estimator,
            interpolate=self.embedding_autoenc.interpolate,
        )

        self.loss_ce = nn.CrossEntropyLoss(reduction='none')

    def compute_loss(self, input_ids, lengths):
        x = self.embedding_autoenc.get_embeddings(input_ids)
        x = self.embedding_grad_scale * x + (1.0 - self.embedding_grad_scale) * x.detach()

        len_mask = torch.arange(input_ids.shape[1], device=input_ids.device).unsqueeze(0) < lengths.unsqueeze(1)
        # conditional masking could be much better. if true, use original embeddings
        cond_mask = torch.rand(input_ids.shape, device=input_ids.device) < 0.1
        diff_mask = len_mask & torch.logical_not(cond_mask)

        loss_diff, x_0_estimation = self.diffusion.compute_loss(x, len_mask, cond_mask)
        loss_diff = loss_diff[diff_mask].mean(-1)

        logits = self.embedding_autoenc.get_logits(x_0_estimation)
        input_ids.masked_fill_(torch.logical_not(diff_mask), -100)
        loss_reconstruction = self.loss_ce(logits.transpose(2, 1), input_ids)

        accuracy = (logits.argmax(dim=-1) == input_ids).float().sum() / diff_mask.sum()

        loss_diff = loss_diff.mean()
        loss_reconstruction = loss_reconstruction.sum() / diff_mask.sum()
        loss = loss_diff + loss_reconstruction

        return loss, loss_diff, loss_reconstruction, accuracy


def compute():
    torch.manual_seed(0)
    random.seed(0)
    model = DiffusionLM(num_embedding=30, embedding_dim=8, model_dim=16, num_layers=1, dropout_prob=0.0)
    input_ids = torch.randint(0, 30, (3, 7))
    lengths = torch.tensor([7, 5, 6])
    loss, loss_diff, loss_reconstruction, accuracy = model.compute_loss(input_ids, lengths)
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
