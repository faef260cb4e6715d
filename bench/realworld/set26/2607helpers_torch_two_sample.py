# Written anew at small size after josipd/torch-two-sample at the parent of commit d077128 ("remove inplace
# operations", March 2018): torch_two_sample/inference_trees.py (TreeMarginals), statistics_diff.py
# (SmoothFRStatistic, the smoothed Friedman-Rafsky test usable "as an objective for training implicit models") and
# util.py (pdist).
# The culprit, as in TreeMarginals.__call__: `d -= d.max()` ("so that we don't have to compute large
# exponentials"). `d` is the upper-triangular part of `-alpha * distances` (a masked_select output), and the
# all-reduce max saves its input, so the in-place shift invalidates a tensor the backward needs: training through
# the statistic fails with "one of the variables needed for gradient computation has been modified by an inplace
# operation". The same commit also rewrote `margs /= len(alphas)` in SmoothFRStatistic.__call__ (on a sum that
# nothing saved).
# Stand-ins for the 2018 API on torch 2.13: no Variable wrappers; the byte masks are bool tensors; `torch.gesv(A,
# M)` (solve M Z = A) is `torch.linalg.solve(M, A)`; cpu only (the `cuda` flag is dropped); no p-value methods.
import torch
from torch.nn.functional import relu


def pdist(sample_1, sample_2, norm=2, eps=1e-5):
    n_1, n_2 = sample_1.size(0), sample_2.size(0)
    norms_1 = torch.sum(sample_1 ** 2, dim=1, keepdim=True)
    norms_2 = torch.sum(sample_2 ** 2, dim=1, keepdim=True)
    norms = norms_1.expand(n_1, n_2) + norms_2.transpose(0, 1).expand(n_1, n_2)
    distances_squared = norms - 2 * sample_1.mm(sample_2.t())
    return torch.sqrt(eps + torch.abs(distances_squared))


class TreeMarginals(object):
    """Marginals of p(x) ~ exp(sum_i d_i x_i) nu(x), nu(x) = 1 iff the edges x form a spanning tree."""

    def __init__(self, n_vertices):
        self.n_vertices = n_vertices
        self.triu_mask = torch.triu(torch.ones(n_vertices, n_vertices), 1).bool()
        n_edges = n_vertices * (n_vertices - 1) // 2
        A = torch.zeros(n_vertices, n_edges)
        k = 0
        for i in range(n_vertices):
            for j in range(i + 1, n_vertices):
                A[i, k] = +1
                A[j, k] = -1
                k += 1
        self.A = A[1:, :]  # the first node is removed

    def to_mat(self, triu):
        matrix = torch.zeros(self.n_vertices, self.n_vertices)
        return matrix.masked_scatter(self.triu_mask, triu)

    def triu(self, matrix):
        return torch.masked_select(matrix, self.triu_mask)

    def __call__(self, d):
        d -= d.max()  # So that we don't have to compute large exponentials.

        # Construct the Laplacian.
        L_off = self.to_mat(torch.exp(d))
        L_off = L_off + L_off.t()
        L_dia = torch.diag(L_off.sum(1))
        L = L_dia - L_off
        L = L[1:, 1:]

        P = (1. / torch.diag(L)).view(1, -1)  # The diagonal pre-conditioner.
        Z = torch.linalg.solve(L * P.expand_as(L), self.A)
        Z = Z * P.t().expand_as(Z)
        # relu for numerical stability, the inside term should never be zero.
        return relu(torch.sum(Z * self.A, 0)) * torch.exp(d)


class SmoothFRStatistic(object):
    def __init__(self, n_1, n_2, compute_t_stat=True):
        n = n_1 + n_2
        self.n_1, self.n_2 = n_1, n_2
        self.idx_within = torch.zeros((n * (n - 1)) // 2, dtype=torch.bool)
        self.nbs = torch.zeros(n, self.idx_within.size()[0])
        k = 0
        for i in range(n):
            for j in range(i + 1, n):
                self.nbs[i, k] = 1
                self.nbs[j, k] = 1
                if (i < n_1 and j < n_1) or (i >= n_1 and j >= n_1):
                    self.idx_within[k] = True
                k += 1
        self.marginals_fn = TreeMarginals(n_1 + n_2)
        self.compute_t_stat = compute_t_stat

    def __call__(self, sample_1, sample_2, alphas, norm=2):
        sample_12 = torch.cat((sample_1, sample_2), 0)
        diffs = pdist(sample_12, sample_12, norm=norm)
        margs = None
        for alpha in alphas:
            margs_a = self.marginals_fn(self.marginals_fn.triu(- alpha * diffs))
            if margs is None:
                margs = margs_a
            else:
                margs = margs + margs_a

        margs /= len(alphas)
        n_1, n_2, n = self.n_1, self.n_2, self.n_1 + self.n_2
        m = margs.sum()
        t_stat = m - torch.masked_select(margs, self.idx_within).sum()
        if self.compute_t_stat:
            nbs_sum = (self.nbs.mm(margs.unsqueeze(1)) ** 2).sum()
            chi_1 = n_1 * n_2 / (n * (n - 1))
            chi_2 = 4 * (n_1 - 1) * (n_2 - 1) / ((n - 2) * (n - 3))
            var = (chi_1 * (1 - chi_2) * nbs_sum + chi_1 * chi_2 * (margs ** 2).sum()
                   + chi_1 * (chi_2 - 4 * chi_1) * m ** 2)
            mean = 2 * m * n_1 * n_2 / (n * (n - 1))
            std = torch.sqrt(1e-5 + var)
        else:
            mean = 0.
            std = 1.
        return - (t_stat - mean) / std
