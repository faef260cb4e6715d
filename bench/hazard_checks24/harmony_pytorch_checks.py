"""harmony-pytorch 0.1.8 (harmony/harmony.py:308, :318, :321 `clustering`, :378 `correction_fast`): the proven
findings of `inplacefix check` (stop 56, fresh56, end of stop). `harmonize` takes a numpy array and runs without
grad; the module's functions take tensors, and these scenarios hand them an embedding that requires grad (real by
this file's convention). The functions are compiled alone from the shipped file; the k-means initialisation
(sklearn) is replaced by centroids drawn from the data, as `initialize_centroids` then builds R, E and O.

- :378: `P[0, 1:] = -factor * O_k` writes P, whose row the previous cluster's `P[0, 1:] * c_inv` (:385) and
  `torch.matmul(P_t_B_inv, P)` (:386) saved. correction_fast with O that requires grad and 3 clusters, backward of
  the corrected embedding: raises; P on a fresh copy each cluster runs.
- :318: `R[idx_in,] = R_in` writes R, whose transpose `Y = torch.matmul(R.t(), Z_norm)` (:295) saved (the check
  names correction's savers; this one is on the same path). One clustering pass on Z_norm that requires grad,
  backward of R: raises; with :295's operand cloned (the saved operand no longer R) runs.
- :308, :321: `O -= ...` and `O += ...` write O, whose column views correction_fast saved (`O_k ** 2`,
  `-factor * O_k`) in the previous harmony iteration (the check names compute_objective's savers, whose objectives
  are only compared; correction's are on the backward path). Two harmony iterations (clustering, correction_fast,
  normalise), :295's operand cloned and :378 on fresh copies (both raise on their own), the other O write through
  `.data`: backward of the second corrected embedding raises; both O writes through `.data` runs."""

import _shim  # noqa: F401
import linecache

import numpy as np
import torch
from torch.nn.functional import normalize
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("harmony/harmony.py")
SHIPPED = {295: "Y = torch.matmul(R.t(), Z_norm)", 308: "O -= torch.matmul(Phi_in.t(), R_in)",
           318: "R[idx_in,] = R_in", 321: "O += torch.matmul(Phi_in.t(), R_in)", 378: "P[0, 1:] = -factor * O_k"}
for n, text in SHIPPED.items():
    assert linecache.getline(PATH, n).strip() == text, n
OFF = {295: "Y = torch.matmul(R.t().clone(), Z_norm)",
       308: "O.data -= torch.matmul(Phi_in.t(), R_in).detach()",
       321: "O.data += torch.matmul(Phi_in.t(), R_in).detach()",
       378: "P = P.clone(); P[0, 1:] = -factor * O_k"}
NAMES = {"clustering", "correction", "correction_fast", "correction_original", "compute_objective",
         "is_convergent_clustering"}


def compiled(off):
    return compile_alone(PATH, NAMES, {"torch": torch, "np": np, "normalize": normalize},
                         replace={n: OFF[n] for n in off})


def setup(n_cells=40, n_clusters=3, d=5):
    torch.manual_seed(0)
    np.random.seed(0)
    X = torch.randn(n_cells, d, requires_grad=True)
    Z = X * 1.0
    Z_norm = normalize(Z, p=2, dim=1)
    batches = torch.arange(n_cells) % 2
    Phi = torch.nn.functional.one_hot(batches, 2).float()
    N_b = Phi.sum(0)
    Pr_b = N_b.view(-1, 1) / n_cells
    theta = torch.tensor([2.0]).expand(2).view(1, -1)
    sigma = 0.1
    Y_norm = normalize(Z_norm.detach()[:n_clusters] + 0.01, p=2, dim=1)
    R = normalize(torch.exp(-2 / sigma * (1 - torch.matmul(Z_norm, Y_norm.t()))), p=1, dim=1)
    E = torch.matmul(Pr_b, torch.sum(R, dim=0, keepdim=True))
    O = torch.matmul(Phi.t(), R)
    return X, Z, Z_norm, Phi, Pr_b, theta, sigma, R, E, O


def one_correction(off):
    ns = compiled(off)

    def go():
        X, Z, Z_norm, Phi, Pr_b, theta, sigma, R, E, O = setup()
        ns["correction_fast"](Z, R, Phi, O, 1.0, "cpu").sum().backward()
        assert X.grad is not None
    return go


def one_clustering(off):
    ns = compiled(off)

    def go():
        X, Z, Z_norm, Phi, Pr_b, theta, sigma, R, E, O = setup()
        ns["clustering"](Z_norm, Pr_b, Phi, R, E, O, 3, theta, 1e-5, [], 2, sigma, 0.5, "cpu")
        R.sum().backward()
        assert X.grad is not None
    return go


def harmony(off):
    ns = compiled(off)

    def go():
        X, Z, Z_norm, Phi, Pr_b, theta, sigma, R, E, O = setup()
        for _ in range(2):
            ns["clustering"](Z_norm, Pr_b, Phi, R, E, O, 3, theta, 1e-5, [], 2, sigma, 0.5, "cpu")
            Z_hat = ns["correction"](Z, R, Phi, O, 1.0, "fast", "cpu")
            Z_norm = normalize(Z_hat, p=2, dim=1)
        Z_hat.sum().backward()
        assert X.grad is not None
    return go


FID = "harmony/harmony.py:378:IPF104"
attempt(FID, "path", "correction_fast (3 clusters) with R and O from an embedding that requires grad: raises",
        one_correction(set()))
attempt(FID, "control", "the same with P on a fresh copy each cluster: runs", one_correction({378}))
FID = "harmony/harmony.py:318:IPF104"
attempt(FID, "path", "one clustering call (2 passes, blocks of half the cells) on Z_norm that requires grad, backward "
        "of R: raises", one_clustering(set()))
attempt(FID, "control", "the same with :295's operand cloned: runs", one_clustering({295}))
FID = "harmony/harmony.py:308:IPF101"
attempt(FID, "path", "two harmony iterations, :295 cloned, :378 fresh, :321 through .data, backward of Z_hat: raises",
        harmony({295, 378, 321}))
attempt(FID, "control", "the same with :308 through .data too: runs", harmony({295, 378, 321, 308}))
FID = "harmony/harmony.py:321:IPF101"
attempt(FID, "path", "two harmony iterations, :295 cloned, :378 fresh, :308 through .data, backward of Z_hat: raises",
        harmony({295, 378, 308}))
attempt(FID, "control", "the same with :321 through .data too: runs", harmony({295, 378, 321, 308}))
