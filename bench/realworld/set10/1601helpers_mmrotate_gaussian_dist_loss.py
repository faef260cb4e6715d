# mmrotate/models/losses/gaussian_dist_loss.py as of the parent of commit 570af21 ("rm inplace operation in gwd"):
# xy_wh_r_2_xy_sigma, postprocess and gwd_loss (Gaussian Wasserstein distance loss for rotated boxes), copied.
# The culprit: `distance = (...).clamp(0).sqrt()` then `distance /= scale` (normalize=True, the default): SqrtBackward
# saved its result. (`whr_distance += ...` before it is on an add output, which nothing saved.)
# Stand-ins: gwd_loss's decorator `@weighted_loss` (mmdet's element-wise weight and reduction wrapper) is dropped; GDLoss.forward's registry, weights and reduction are in the case.
import torch


def xy_wh_r_2_xy_sigma(xywhr):
    """Convert oriented bounding box to 2-D Gaussian distribution.

    Args:
        xywhr (torch.Tensor): rbboxes with shape (N, 5).

    Returns:
        xy (torch.Tensor): center point of 2-D Gaussian distribution
            with shape (N, 2).
        sigma (torch.Tensor): covariance matrix of 2-D Gaussian distribution
            with shape (N, 2, 2).
    """
    _shape = xywhr.shape
    assert _shape[-1] == 5
    xy = xywhr[..., :2]
    wh = xywhr[..., 2:4].clamp(min=1e-7, max=1e7).reshape(-1, 2)
    r = xywhr[..., 4]
    cos_r = torch.cos(r)
    sin_r = torch.sin(r)
    R = torch.stack((cos_r, -sin_r, sin_r, cos_r), dim=-1).reshape(-1, 2, 2)
    S = 0.5 * torch.diag_embed(wh)

    sigma = R.bmm(S.square()).bmm(R.permute(0, 2,
                                            1)).reshape(_shape[:-1] + (2, 2))

    return xy, sigma


def postprocess(distance, fun='log1p', tau=1.0):
    """Convert distance to loss.

    Args:
        distance (torch.Tensor)
        fun (str, optional): The function applied to distance.
            Defaults to 'log1p'.
        tau (float, optional): Defaults to 1.0.

    Returns:
        loss (torch.Tensor)
    """
    if fun == 'log1p':
        distance = torch.log1p(distance)
    elif fun == 'sqrt':
        distance = torch.sqrt(distance)
    elif fun == 'none':
        pass
    else:
        raise ValueError(f'Invalid non-linear function {fun}')

    if tau >= 1.0:
        return 1 - 1 / (tau + distance)
    else:
        return distance




def gwd_loss(pred, target, fun='log1p', tau=1.0, alpha=1.0, normalize=True):
    """Gaussian Wasserstein distance loss.

    Args:
        pred (torch.Tensor): Predicted bboxes.
        target (torch.Tensor): Corresponding gt bboxes.
        fun (str): The function applied to distance. Defaults to 'log1p'.
        tau (float): Defaults to 1.0.
        alpha (float): Defaults to 1.0.
        normalize (bool): Whether to normalize the distance. Defaults to True.

    Returns:
        loss (torch.Tensor)

    Derivation and simplification:
        Given any positive-definite symmetrical 2*2 matrix Z:
            Tr(Z^(1/2)) = sqrt(λ_1) + sqrt(λ_2)
        where λ_1 and λ_2 are the eigen values of Z
        Meanwhile we have:
            Tr(Z) = λ_1 + λ_2
            det(Z) = λ_1 * λ_2
        Combination with following formula:
            (sqrt(λ_1) + sqrt(λ_2))^2 = λ_1 + λ_2 + 2 * sqrt(λ_1 * λ_2)
        Yield:
            Tr(Z^(1/2)) = sqrt(Tr(Z) + 2 * sqrt(det(Z)))
        For gwd loss the frustrating coupling part is:
            Tr((Σp^(1/2) * Σt * Σp^(1/2))^(1/2))
        Assuming Z = Σp^(1/2) * Σt * Σp^(1/2) then:
            Tr(Z) = Tr(Σp^(1/2) * Σt * Σp^(1/2))
                  = Tr(Σp^(1/2) * Σp^(1/2) * Σt)
                  = Tr(Σp * Σt)
            det(Z) = det(Σp^(1/2) * Σt * Σp^(1/2))
                   = det(Σp^(1/2)) * det(Σt) * det(Σp^(1/2))
                   = det(Σp * Σt)
        and thus we can rewrite the coupling part as:
            Tr((Σp^(1/2) * Σt * Σp^(1/2))^(1/2))
                = Tr{Z^(1/2)} = sqrt(Tr(Z) + 2 * sqrt(det(Z)))
                = sqrt(Tr(Σp * Σt) + 2 * sqrt(det(Σp * Σt)))
    """
    xy_p, Sigma_p = pred
    xy_t, Sigma_t = target

    xy_distance = (xy_p - xy_t).square().sum(dim=-1)

    whr_distance = Sigma_p.diagonal(dim1=-2, dim2=-1).sum(dim=-1)
    whr_distance = whr_distance + Sigma_t.diagonal(
        dim1=-2, dim2=-1).sum(dim=-1)

    _t_tr = (Sigma_p.bmm(Sigma_t)).diagonal(dim1=-2, dim2=-1).sum(dim=-1)
    _t_det_sqrt = (Sigma_p.det() * Sigma_t.det()).clamp(0).sqrt()
    whr_distance += (-2) * ((_t_tr + 2 * _t_det_sqrt).clamp(0).sqrt())

    distance = (xy_distance + alpha * alpha * whr_distance).clamp(0).sqrt()

    if normalize:
        scale = 2 * (_t_det_sqrt.sqrt().sqrt()).clamp(1e-7)
        distance /= scale

    return postprocess(distance, fun=fun, tau=tau)


