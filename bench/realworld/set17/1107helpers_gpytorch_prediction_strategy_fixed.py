# Reduced copy of gpytorch/models/exact_prediction_strategies.py (gpytorch, August 2019) with commit b003438a applied for
# case 1107: the covariance-cache update of DefaultPredictionStrategy.get_fantasy_strategy (the new root
# Z = [L 0; lower_left schur_root] and its pseudo-inverse through a QR decomposition with jitter on an almost singular
# R). Stand-ins: the lazy tensors are dense; `torch.qr` / `torch.triangular_solve` / `torch.cholesky` (removed or
# deprecated) are torch.linalg.qr / torch.linalg.solve_triangular / torch.linalg.cholesky; the mean-cache update,
# batch expansion and the new strategy object are left out (the function returns the new covariance cache).
import torch


def fantasy_covar_cache(L, L_inverse, fant_train_covar, fant_fant_covar):
    batch_shape = fant_train_covar.shape[:-2]
    m, n = L.shape[-2:]

    lower_left = fant_train_covar.matmul(L_inverse)
    schur_root = torch.linalg.cholesky(fant_fant_covar - lower_left.matmul(lower_left.transpose(-2, -1)))

    # Form new root Z = [L 0; lower_left schur_root]
    num_fant = schur_root.size(-2)
    m, n = L.shape[-2:]
    new_root = torch.zeros(*batch_shape, m + num_fant, n + num_fant, device=L.device, dtype=L.dtype)
    new_root[..., :m, :n] = L
    new_root[..., m:, :n] = lower_left
    new_root[..., m:, n:] = schur_root

    # Use pseudo-inverse of Z as new inv root
    Q, R = torch.linalg.qr(new_root)
    Rdiag = torch.diagonal(R, dim1=-2, dim2=-1)
    # if R is almost singular, add jitter (Rdiag is a view, so this works)
    zeroish = Rdiag.abs() < 1e-6
    if torch.any(zeroish):
        # can't use in-place operation here b/c it would mess up backward pass
        # haven't found a more elegant way to add a jitter diagonal yet...
        jitter_diag = 1e-6 * torch.sign(Rdiag) * zeroish.to(Rdiag)
        R = R + jitter_diag.unsqueeze(-1) * torch.eye(R.size(-1), device=R.device, dtype=R.dtype)
    new_covar_cache = torch.linalg.solve_triangular(R, Q.transpose(-2, -1), upper=True)
    new_covar_cache = new_covar_cache.transpose(-2, -1)
    return new_root, new_covar_cache
