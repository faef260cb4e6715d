# Library module for case 2505: a small re-implementation of pyapprox.surrogates.autogp (hyperparameter.py,
# kernels.py, exactgp.py) as added in commit 59fd4546 (September 2023), written anew with torch only. Kept from
# the source: hyper-parameters hold their values in a tensor written by `set_active_opt_params`
# (`self._values[active] = transform.from_opt_space(active_params)`), the squared-exponential Matern kernel
# (nu = inf) returns `exp(-(distances**2)/2.0)`, and the negative log-likelihood's gradient comes from torch. The
# training kernel matrix is regularised with the form the maintainer's comment in exactgp.py records as failing
# ("Below is an inplace operation that will not work with autograd"): `kmat[np.diag_indices_from(kmat)] +=
# self.kernel_reg`.
# Stand-ins: numpy is not installed with the benchmark's torch, so arrays are double tensors, np.diag_indices_from
# is a two-line torch equivalent, the scipy optimiser is left out (the program evaluates the objective and its
# gradient once, as the maintainers' test does before fitting), the variable transform is the identity and the
# values transform standardises by the standard deviation.
import math

import torch


def diag_indices_from(mat):
    idx = torch.arange(mat.shape[0])
    return idx, idx


class LogHyperParameterTransform:
    def to_opt_space(self, params):
        return torch.log(params)

    def from_opt_space(self, params):
        return torch.exp(params)


class HyperParameter:
    def __init__(self, name, nvars, values, bounds, transform):
        self.name = name
        self.nvars = nvars
        self._values = torch.atleast_1d(torch.as_tensor(values, dtype=torch.double))
        if self._values.shape[0] == 1:
            self._values = self._values.repeat(nvars)
        self.bounds = torch.atleast_1d(torch.as_tensor(bounds, dtype=torch.double))
        if self.bounds.shape[0] == 2:
            self.bounds = self.bounds.repeat(nvars)
        self.bounds = self.bounds.reshape(nvars, 2)
        self.transform = transform
        self._active_indices = torch.arange(nvars)[~torch.isnan(self.bounds[:, 0])]

    def nactive_vars(self):
        return self._active_indices.shape[0]

    def set_active_opt_params(self, active_params):
        self._values[self._active_indices] = self.transform.from_opt_space(active_params)

    def get_active_opt_bounds(self):
        return self.transform.to_opt_space(self.bounds[self._active_indices, :])

    def get_values(self):
        return self._values


class HyperParameterList:
    def __init__(self, hyper_params):
        self.hyper_params = hyper_params

    def set_active_opt_params(self, active_params):
        cnt = 0
        for hyp in self.hyper_params:
            hyp.set_active_opt_params(active_params[cnt:cnt + hyp.nactive_vars()])
            cnt += hyp.nactive_vars()

    def get_active_opt_bounds(self):
        return torch.vstack([hyp.get_active_opt_bounds() for hyp in self.hyper_params])


class MaternKernel:
    def __init__(self, nu, lenscale, lenscale_bounds, nvars):
        self.nvars = nvars
        self.nu = nu
        self._len_scale = HyperParameter("lenscale", nvars, lenscale, lenscale_bounds,
                                         LogHyperParameterTransform())
        self.hyp_list = HyperParameterList([self._len_scale])

    def __call__(self, X, Y=None):
        len_scale = self._len_scale.get_values()
        Y = X if Y is None else Y
        distances = torch.cdist(X.T / len_scale, Y.T / len_scale, p=2)
        if self.nu == 0.5:
            return torch.exp(-distances)
        if self.nu == math.inf:
            return torch.exp(-(distances ** 2) / 2.0)
        raise ValueError(f"Matern kernel with nu={self.nu} not supported here")


class ExactGaussianProcess:
    def __init__(self, nvars, kernel, kernel_reg=0):
        self.nvars = nvars
        self.kernel = kernel
        self.kernel_reg = kernel_reg
        self.canonical_train_samples = None
        self.canonical_train_values = None

    def _training_kernel_matrix(self):
        kmat = self.kernel(self.canonical_train_samples, self.canonical_train_samples)
        kmat[diag_indices_from(kmat)] += self.kernel_reg
        return kmat

    def _factor_training_kernel_matrix(self):
        return (torch.linalg.cholesky(self._training_kernel_matrix()),)

    def _canonical_mean(self, canonical_samples):
        return torch.full((canonical_samples.shape[1], 1), 0., dtype=torch.double)

    def _solve_coefficients(self, chol):
        diff = self.canonical_train_values - self._canonical_mean(self.canonical_train_samples)
        return torch.cholesky_solve(diff, chol)

    def _log_determinant(self, chol):
        return torch.log(torch.diag(chol)).sum()

    def _neg_log_likelihood(self, active_opt_params):
        self.kernel.hyp_list.set_active_opt_params(active_opt_params)
        coef_args = self._factor_training_kernel_matrix()
        coef = self._solve_coefficients(*coef_args)
        nsamples = self.canonical_train_values.shape[0]
        diff = self.canonical_train_values - self._canonical_mean(self.canonical_train_samples)
        return 0.5 * (torch.linalg.multi_dot((diff.T, coef)) + self._log_determinant(*coef_args)
                      + nsamples * math.log(2 * math.pi)).sum(dim=1)

    def _fit_objective(self, active_opt_params_init):
        active_opt_params = active_opt_params_init.clone().detach().requires_grad_(True)
        nll = self._neg_log_likelihood(active_opt_params)
        nll.backward()
        val = nll.detach().clone()
        nll_grad = active_opt_params.grad.detach().clone()
        for hyp in self.kernel.hyp_list.hyper_params:
            hyp._values = hyp._values.clone().detach()
        return val, nll_grad

    def set_training_data(self, train_samples, train_values):
        self.canonical_train_samples = train_samples.to(torch.double)
        std = train_values.std()
        self.canonical_train_values = (train_values / std).to(torch.double)
