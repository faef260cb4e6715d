# FIXED copy (commit dd2b3bd): `x = x / data_range`.
# Written anew at small size after photosynthesis-team/piq (then "photosynthesis.metrics") at the parent of commit
# dd2b3bd ("fix(brisque): Avoid inplace to use backward.", June 2020): photosynthesis_metrics/brisque.py (brisque,
# BRISQUELoss and its helpers) and photosynthesis_metrics/utils.py (_adjust_dimensions).
# The culprit, as in brisque.py: after validating and reshaping the input, `brisque` normalises it in place,
# `x /= data_range`. For a 4-D input `_adjust_dimensions` returns the caller's tensor itself, so when the image is
# a leaf that requires grad (BRISQUELoss's docstring: `prediction = torch.rand(3, 3, 256, 256,
# requires_grad=True)`, then `loss(prediction).backward()`) the call raises "a leaf Variable that requires grad is
# being used in an in-place operation".
# Stand-ins: `_validate_input` is reduced to the dimension check; the 36 MATLAB feature ranges of `_scale_features`
# are replaced by [0, 1] for every feature (the scaling stays affine); the SVR weights that `_score_svr` downloads
# with `load_url` are passed in by the caller (sv_coef, sv); the GGD / AGGD lookup tables keep upstream's gamma grid.
from typing import Tuple, Union

import torch
import torch.nn.functional as F
from torch.nn.modules.loss import _Loss


def _adjust_dimensions(input_tensors):
    if isinstance(input_tensors, torch.Tensor):
        input_tensors = (input_tensors,)
    for tensor in input_tensors:
        if tensor.dim() == 2:
            tensor.unsqueeze_(0)
        if tensor.dim() == 3:
            tensor.unsqueeze_(0)
        if tensor.dim() != 4 and tensor.dim() != 5:
            raise ValueError(f'Expected 2, 3, 4 or 5 dimensions (got {tensor.dim()})')
    if len(input_tensors) == 1:
        return input_tensors[0]
    return input_tensors


def _validate_input(input_tensors, allow_5d: bool) -> None:
    if not (2 <= input_tensors.dim() <= (5 if allow_5d else 4)):
        raise ValueError("unexpected number of dimensions")


def _ggd_parameters(x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    gamma = torch.arange(0.2, 10 + 0.001, 0.001)
    r_table = (torch.lgamma(1. / gamma) + torch.lgamma(3. / gamma) - 2 * torch.lgamma(2. / gamma)).exp()
    r_table = r_table.repeat(x.size(0), 1)
    sigma_sq = x.pow(2).mean(dim=(-1, -2))
    sigma = sigma_sq.sqrt().squeeze(dim=-1)
    E = x.abs().mean(dim=(-1, -2))
    rho = sigma_sq / E ** 2
    indexes = (rho - r_table).abs().argmin(dim=-1)
    return gamma[indexes], sigma


def _aggd_parameters(x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gamma = torch.arange(start=0.2, end=10.001, step=0.001)
    r_table = torch.exp(2 * torch.lgamma(2. / gamma) - torch.lgamma(1. / gamma)
                        - torch.lgamma(3. / gamma)).repeat(x.size(0), 1)
    mask_left = x < 0
    mask_right = x > 0
    count_left = mask_left.sum(dim=(-1, -2))
    count_right = mask_right.sum(dim=(-1, -2))
    left_sigma = ((x * mask_left).pow(2).sum(dim=(-1, -2)) / count_left).sqrt()
    right_sigma = ((x * mask_right).pow(2).sum(dim=(-1, -2)) / count_right).sqrt()
    gamma_hat = left_sigma / right_sigma
    ro_hat = x.abs().mean(dim=(-1, -2)).pow(2) / x.pow(2).mean(dim=(-1, -2))
    ro_hat_norm = (ro_hat * (gamma_hat.pow(3) + 1) * (gamma_hat + 1)) / (gamma_hat.pow(2) + 1).pow(2)
    indexes = (ro_hat_norm - r_table).abs().argmin(dim=-1)
    return gamma[indexes], left_sigma.squeeze(dim=-1), right_sigma.squeeze(dim=-1)


def _gaussian_kernel2d(kernel_size: int = 7, sigma: float = 7 / 6) -> torch.Tensor:
    x = torch.arange(- (kernel_size // 2), kernel_size // 2 + 1).view(1, kernel_size)
    y = torch.arange(- (kernel_size // 2), kernel_size // 2 + 1).view(kernel_size, 1)
    kernel = torch.exp(-(x * x + y * y) / (2.0 * sigma ** 2))
    return kernel / torch.sum(kernel)


def _natural_scene_statistics(luma: torch.Tensor, kernel_size: int = 7, sigma: float = 7. / 6) -> torch.Tensor:
    kernel = _gaussian_kernel2d(kernel_size=kernel_size, sigma=sigma).view(1, 1, kernel_size, kernel_size)
    C = 1
    mu = F.conv2d(luma, kernel, padding=kernel_size // 2)
    mu_sq = mu ** 2
    std = F.conv2d(luma ** 2, kernel, padding=kernel_size // 2)
    std = ((std - mu_sq).abs().sqrt())
    luma_nrmlzd = (luma - mu) / (std + C)
    features = []
    alpha, sigma = _ggd_parameters(luma_nrmlzd)
    features.extend((alpha, sigma.pow(2)))
    for shift in [(0, 1), (1, 0), (1, 1), (-1, 1)]:
        shifted_luma_nrmlzd = torch.roll(luma_nrmlzd, shifts=shift, dims=(-2, -1))
        alpha, sigma_l, sigma_r = _aggd_parameters(luma_nrmlzd * shifted_luma_nrmlzd)
        eta = (sigma_r - sigma_l) * torch.exp(
            torch.lgamma(2. / alpha) - (torch.lgamma(1. / alpha) + torch.lgamma(3. / alpha)) / 2)
        features.extend((alpha, eta, sigma_l.pow(2), sigma_r.pow(2)))
    return torch.stack(features, dim=-1)


def _scale_features(features: torch.Tensor) -> torch.Tensor:
    lower_bound, upper_bound = -1, 1
    feature_ranges = torch.stack([torch.zeros(36), torch.ones(36)], dim=-1)  # stand-in for the MATLAB ranges
    return lower_bound + (upper_bound - lower_bound) * (features - feature_ranges[..., 0]) / (
        feature_ranges[..., 1] - feature_ranges[..., 0])


def _RBF_kernel(features: torch.Tensor, sv: torch.Tensor, gamma: float = 0.05) -> torch.Tensor:
    features.unsqueeze_(dim=-1)
    sv.unsqueeze_(dim=0)
    dist = (features - sv).pow(2).sum(dim=1)
    return torch.exp(- dist * gamma)


def _score_svr(features: torch.Tensor, sv_coef: torch.Tensor, sv: torch.Tensor) -> torch.Tensor:
    gamma = 0.05
    rho = -153.591
    sv.t_()
    kernel_features = _RBF_kernel(features=features, sv=sv, gamma=gamma)
    score = kernel_features @ sv_coef
    return score - rho


def brisque(x: torch.Tensor, sv_coef: torch.Tensor, sv: torch.Tensor, kernel_size: int = 7,
            kernel_sigma: float = 7 / 6, data_range: Union[int, float] = 1., reduction: str = 'mean',
            interpolation: str = 'nearest') -> torch.Tensor:
    _validate_input(input_tensors=x, allow_5d=False)
    x = _adjust_dimensions(input_tensors=x)

    x = x / data_range

    if x.size(1) == 3:
        rgb_to_grey = torch.tensor([0.299, 0.587, 0.114]).view(1, -1, 1, 1)
        x = torch.sum(x * rgb_to_grey, dim=1, keepdim=True)
    features = []
    for _ in range(2):
        features.append(_natural_scene_statistics(x, kernel_size, kernel_sigma))
        x = F.interpolate(x, scale_factor=0.5, mode=interpolation)
    features = torch.cat(features, dim=-1)
    scaled_features = _scale_features(features)
    score = _score_svr(scaled_features, sv_coef, sv)
    if reduction == 'none':
        return score
    return {'mean': score.mean(dim=0), 'sum': score.sum(dim=0)}[reduction]


class BRISQUELoss(_Loss):
    def __init__(self, sv_coef, sv, kernel_size: int = 7, kernel_sigma: float = 7 / 6,
                 data_range: Union[int, float] = 1., reduction: str = 'mean', interpolation: str = 'nearest'):
        super().__init__()
        self.sv_coef, self.sv = sv_coef, sv
        self.reduction = reduction
        self.kernel_size = kernel_size
        self.kernel_sigma = kernel_sigma
        self.data_range = data_range
        self.interpolation = interpolation

    def forward(self, prediction: torch.Tensor) -> torch.Tensor:
        # upstream loads the SVR weights afresh in every call; here a fresh copy of the given ones
        return brisque(prediction, self.sv_coef.clone(), self.sv.clone(), reduction=self.reduction,
                       kernel_size=self.kernel_size, kernel_sigma=self.kernel_sigma, data_range=self.data_range,
                       interpolation=self.interpolation)
