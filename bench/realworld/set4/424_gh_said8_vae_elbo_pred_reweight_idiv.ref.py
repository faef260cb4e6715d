# reference fix for 424: elbo_loss divides out of place, `answer_reweight = answer_reweight / std.view(1, 1, -1)` and `pred_reweight = pred_reweight / std.view(1, 1, -1)` (the reporter's fix: ordinary operations instead of the in-place ones).
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class BCLatent:
    """Latent variables of the BCVAE"""

    mean: torch.FloatTensor
    log_var: torch.FloatTensor


@dataclass
class BCVAEOutput:
    """Output of the BCVAE"""

    mean: torch.FloatTensor
    log_var: torch.FloatTensor
    latent: torch.FloatTensor
    coeffs_reconst: torch.FloatTensor


class BCEncoder(nn.Module):
    """Encoder for the blendshape coefficients"""

    def __init__(self, in_channels: int = 32, z_dim: int = 64) -> None:
        super().__init__()

        self.conv_layers = nn.Sequential(
            nn.Conv1d(in_channels, 32, kernel_size=3, stride=1),
            nn.BatchNorm1d(32),
            nn.LeakyReLU(0.2, True),
            nn.Conv1d(32, 64, kernel_size=3, stride=1),
            nn.BatchNorm1d(64),
            nn.LeakyReLU(0.2, True),
            nn.Conv1d(64, 64, kernel_size=4, stride=2),
            nn.BatchNorm1d(64),
            nn.LeakyReLU(0.2, True),
            nn.Conv1d(64, 32, kernel_size=3, stride=1),
            nn.Flatten(),
        )

        self.fc_layers = nn.Sequential(
            nn.Linear(1760, 256),
            nn.BatchNorm1d(256),
            nn.LeakyReLU(inplace=True),
            nn.Linear(256, 128),
            nn.BatchNorm1d(128),
            nn.LeakyReLU(inplace=True),
            nn.Linear(128, z_dim),
        )

        self.fc_mu = nn.Linear(z_dim, z_dim)
        self.fc_logvar = nn.Linear(z_dim, z_dim)

    def forward(self, coeffs: torch.Tensor) -> BCLatent:
        out = self.conv_layers(coeffs.transpose(1, 2))
        latent = self.fc_layers(out)

        mean = self.fc_mu(latent)
        log_var = self.fc_logvar(latent)

        return BCLatent(mean=mean, log_var=log_var)

    @staticmethod
    def reparametrize(
        mean: torch.FloatTensor,
        log_var: torch.FloatTensor,
    ) -> torch.FloatTensor:
        batch_size, z_dim = mean.shape
        device = mean.device
        eps = torch.randn(batch_size, z_dim).to(device)
        latent = mean + torch.exp(0.5 * log_var) * eps
        return latent


class BCDecoder(nn.Module):
    """Decoder for the blendshape coefficients"""

    def __init__(
        self, out_channels: int = 32, seq_len: int = 120, z_dim: int = 64
    ) -> None:
        super().__init__()

        self.fc_layers = nn.Sequential(
            nn.Linear(z_dim, 2 * seq_len),
            nn.BatchNorm1d(2 * seq_len),
            nn.LeakyReLU(inplace=True),
            nn.Linear(2 * seq_len, 4 * seq_len),
            nn.Unflatten(1, (4, seq_len)),
        )

        self.conv_layers = nn.Sequential(
            nn.ConvTranspose1d(4, 32, 3),
            nn.BatchNorm1d(32),
            nn.LeakyReLU(0.2, True),
            nn.ConvTranspose1d(32, 32, 3),
            nn.BatchNorm1d(32),
            nn.LeakyReLU(0.2, True),
            nn.Conv1d(32, 32, 3),
            nn.Conv1d(32, out_channels, 3),
            nn.ReLU(),
            nn.Tanh(),
        )

    def forward(self, latent: torch.Tensor) -> torch.Tensor:
        out = self.fc_layers(latent)
        coeffs_reconst = self.conv_layers(out).transpose(1, 2)
        return coeffs_reconst


class BCVAE(nn.Module):
    """Autoencoder for the blendshape coefficients"""

    def __init__(
        self,
        channels: int = 32,
        seq_len: int = 120,
        z_dim: int = 64,
    ) -> None:
        super().__init__()
        self.seq_len = seq_len
        self.encoder = BCEncoder(channels, z_dim)
        self.decoder = BCDecoder(channels, seq_len, z_dim)

    def forward(self, coeffs: torch.Tensor, use_noise: bool = True) -> BCVAEOutput:
        latent_stats = self.encode(coeffs)
        mean = latent_stats.mean
        log_var = latent_stats.log_var
        latent = self.reparametrize(mean, log_var) if use_noise else mean
        coeffs_reconst = self.decode(latent)

        return BCVAEOutput(
            mean=mean, log_var=log_var, latent=latent, coeffs_reconst=coeffs_reconst
        )

    def encode(self, coeffs: torch.Tensor) -> BCLatent:
        return self.encoder(coeffs)

    def reparametrize(
        self,
        mean: torch.FloatTensor,
        log_var: torch.FloatTensor,
    ) -> torch.FloatTensor:
        return self.encoder.reparametrize(mean, log_var)

    def decode(self, latent: torch.Tensor) -> torch.Tensor:
        return self.decoder(latent)


@dataclass
class LossStepOutput:
    """
    Dataclass for the losses at each step
    """

    reconst: torch.FloatTensor  # (1,), Reconstruction loss
    regularize: torch.FloatTensor  # (1,), Regularization loss
    velocity: torch.FloatTensor  # (1,), Velocity loss


def elbo_loss(said_vae, data, std, device):
    blendshape_coeffs = data.to(device)
    output = said_vae(blendshape_coeffs)

    batch_size = blendshape_coeffs.shape[0]

    mean = output.mean
    log_var = output.log_var
    blendshape_coeffs_reconst = output.coeffs_reconst

    criterion_reconst = nn.MSELoss(reduction="sum")
    criterion_velocity = nn.MSELoss(reduction="sum")

    answer_reweight = blendshape_coeffs
    pred_reweight = blendshape_coeffs_reconst
    if std is not None:
        answer_reweight = answer_reweight / std.view(1, 1, -1)
        pred_reweight = pred_reweight / std.view(1, 1, -1)

    loss_reconst = 0.5 * criterion_reconst(answer_reweight, pred_reweight) / batch_size

    loss_kld = 0.5 * torch.mean(
        torch.sum(torch.pow(mean, 2) + torch.exp(log_var) - log_var - 1, dim=1)
    )

    answer_diff = answer_reweight[:, 1:, :] - answer_reweight[:, :-1, :]
    pred_diff = pred_reweight[:, 1:, :] - pred_reweight[:, :-1, :]

    loss_vel = 0.5 * criterion_velocity(pred_diff, answer_diff) / batch_size

    return LossStepOutput(
        reconst=loss_reconst,
        regularize=loss_kld,
        velocity=loss_vel,
    )


def compute():
    torch.manual_seed(0)
    said_vae = BCVAE(channels=32, seq_len=120, z_dim=16)
    said_vae.train()
    coeffs = torch.rand(4, 120, 32)
    std = coeffs.reshape(-1, 32).std(dim=0).view(1, -1)
    beta, weight_vel = 0.1, 1.0
    losses = elbo_loss(said_vae, coeffs, std, torch.device("cpu"))
    loss = losses.reconst + beta * losses.regularize + weight_vel * losses.velocity
    loss.backward()
    return {n: p.grad for n, p in said_vae.named_parameters()}


if __name__ == "__main__":
    compute()
