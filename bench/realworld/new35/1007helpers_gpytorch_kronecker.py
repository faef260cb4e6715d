# Reduced copy of gpytorch/lazy/kronecker_product_lazy_tensor.py (gpytorch, July 2020, before PR #1203) for case 1007:
# KroneckerProductLazyTensor._symeig as it was, and the eigen-decomposition based inverse quadratic form and log
# determinant of KroneckerProductAddedDiagLazyTensor (K_1 kron K_2 + noise * I) that the marginal log likelihood calls.
# Stand-ins: the lazy tensors are dense tensors (lazy_tensor.evaluate() is the tensor itself), `.symeig(eigenvectors=
# True)` (removed from torch) is torch.linalg.eigh, the eigenvalue / eigenvector Kronecker wrappers are lists, and the
# @cached decorator is dropped.
import math

import torch


def _kron(a, b):
    return (a[:, None, :, None] * b[None, :, None, :]).reshape(a.size(0) * b.size(0), a.size(1) * b.size(1))


class KroneckerProductLazyTensor:
    def __init__(self, *lazy_tensors):
        self.lazy_tensors = lazy_tensors

    def _symeig(self, eigenvectors=True):
        # eigenvectors may not get zeroed if called w/o eigenvectors after initialization

        evals, evecs = [], []
        for lazy_tensor in self.lazy_tensors:
            eval_tensor = lazy_tensor
            tensor_dtype = eval_tensor.dtype

            evals_, evecs_ = torch.linalg.eigh(eval_tensor.double())

            # we chop any negative eigenvalues
            evals_.clamp_min_(0.0)

            evals_ = evals_.type(tensor_dtype)
            evecs_ = evecs_.type(tensor_dtype)

            evals.append(evals_)
            evecs.append(evecs_)
        return evals, evecs


class KroneckerProductAddedDiagLazyTensor:
    def __init__(self, lazy_tensor, noise):
        self.lazy_tensor = lazy_tensor
        self.noise = noise

    def inv_quad_logdet(self, rhs):
        evals, evecs = self.lazy_tensor._symeig(eigenvectors=True)
        evals_full = (evals[0][:, None] * evals[1][None, :]).reshape(-1) + self.noise
        q = _kron(evecs[0], evecs[1])
        proj = q.transpose(-1, -2) @ rhs
        inv_quad = (proj ** 2 / evals_full).sum()
        logdet = torch.log(evals_full).sum()
        return inv_quad, logdet


def exact_marginal_log_likelihood(covar, y):
    inv_quad, logdet = covar.inv_quad_logdet(y)
    n = y.numel()
    return -0.5 * (inv_quad + logdet + n * math.log(2 * math.pi)) / n
