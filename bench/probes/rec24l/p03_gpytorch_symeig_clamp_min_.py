# source: https://github.com/cornellius-gp/gpytorch/pull/1203
# error: A
# A symmetric eigendecomposition helper clamps the eigenvalues in place; eigh's backward
# needs the eigenvalues it returned.
import torch


def _symeig(mat):
    evals, evecs = torch.linalg.eigh(mat)
    evals.clamp_min_(0.0)
    return evals, evecs


def root_decomposition(mat):
    evals, evecs = _symeig(mat)
    return evecs * evals.sqrt().unsqueeze(-2)


def compute():
    torch.manual_seed(0)
    a = torch.randn(4, 4, requires_grad=True)
    mat = a @ a.transpose(-1, -2) - 0.5 * torch.eye(4)
    root = root_decomposition(mat)
    root.sum().backward()
    return {"a": a.grad}


if __name__ == "__main__":
    compute()
