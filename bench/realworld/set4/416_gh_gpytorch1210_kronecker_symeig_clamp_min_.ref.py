# reference fix for 416: the merged PR: `evals_ = evals_.clamp_min(0.0)` out of place.
import torch
import torch.nn as nn


def _kron(a, b):
    return torch.kron(a, b)


class KroneckerProductLazyTensor:
    def __init__(self, *lazy_tensors):
        self.lazy_tensors = lazy_tensors

    def evaluate(self):
        out = self.lazy_tensors[0]
        for t in self.lazy_tensors[1:]:
            out = _kron(out, t)
        return out

    def _symeig(self, eigenvectors=True):
        evals, evecs = [], []
        for lazy_tensor in self.lazy_tensors:
            eval_tensor = lazy_tensor
            tensor_dtype = eval_tensor.dtype

            evals_, evecs_ = torch.linalg.eigh(eval_tensor.double())

            # we chop any negative eigenvalues
            evals_ = evals_.clamp_min(0.0)

            evals_ = evals_.type(tensor_dtype)
            evecs_ = evecs_.type(tensor_dtype)

            evals.append(evals_)
            evecs.append(evecs_)
        evals = KroneckerProductLazyTensor(*[torch.diag(evals_) for evals_ in evals])
        evecs = KroneckerProductLazyTensor(*evecs)
        return evals, evecs


class GridRBFKernel(nn.Module):
    def __init__(self):
        super().__init__()
        self.raw_lengthscale = nn.Parameter(torch.zeros(2))

    def forward(self, grids):
        ls = nn.functional.softplus(self.raw_lengthscale)
        factors = []
        for d, g in enumerate(grids):
            diff = (g[:, None] - g[None, :]) / ls[d]
            factors.append(torch.exp(-0.5 * diff ** 2))
        return KroneckerProductLazyTensor(*factors)


def compute():
    torch.manual_seed(0)
    kernel = GridRBFKernel()
    raw_noise = nn.Parameter(torch.tensor(-1.0))
    grids = [torch.linspace(0, 1, 4), torch.linspace(0, 1, 3)]
    y = torch.randn(12)
    K = kernel(grids)
    evals, evecs = K._symeig()
    noise = nn.functional.softplus(raw_noise)
    lam = torch.diagonal(evals.evaluate()) + noise          # eigenvalues of K + noise*I
    Q = evecs.evaluate()
    alpha = Q @ ((Q.t() @ y) / lam)                          # (K + noise I)^{-1} y
    nll = 0.5 * (y @ alpha) + 0.5 * torch.log(lam).sum()
    nll.backward()
    return {"raw_lengthscale": kernel.raw_lengthscale.grad, "raw_noise": raw_noise.grad}


if __name__ == "__main__":
    compute()
