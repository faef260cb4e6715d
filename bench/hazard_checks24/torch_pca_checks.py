"""torch-pca 1.1.0 (torch_pca/pca_main.py:189 `PCA.fit`, torch_pca/svd.py:118 `svd_flip`): the proven findings of
`inplacefix check` (stop 55, fresh55, end of stop). The package imports only torch, so this driver imports it from
the unpacked wheel ($FRESH53_SITE/torch_pca) and rewrites single lines with `_rewrite.rewritten` for the controls.

- pca_main.py:189: with `svd_solver="covariance_eigh"`, `eigenvals[eigenvals < 0.0] = 0.0` writes the eigenvalues
  that `torch.linalg.eigh` (:187) saved. Fitting on data that requires grad and differentiating the fitted
  components raises (svd_flip's :118 out of place, which raises on this path too: it writes the index_select'ed
  eigenvectors that `take_along_dim` saved): real by this file's convention (an input that requires grad).
- svd.py:118: `vh_mat *= signs[:, None]` writes V^H, which `torch.linalg.svd` saved (the check names the
  `take_along_dim` that read it through `flat_vh`, a view). With `svd_solver="full"` and data that requires grad,
  backward of the components raises; isolated with :117 (`u_mat *= signs[None, :]`, which writes svd's saved U and
  raises on its own, unproven: a miss) out of place. Real by this file's convention.
"""

import _shim  # noqa: F401
import linecache
import os
import sys

import torch
from _check import attempt
from _fresh53 import ROOT
from _rewrite import replaced, rewritten

sys.path.insert(0, os.path.join(ROOT, "torch_pca"))
import torch_pca.pca_main as pca_main  # noqa: E402
import torch_pca.svd as svd  # noqa: E402

MAIN, SVD = pca_main.__file__, svd.__file__
assert linecache.getline(MAIN, 189).strip() == "eigenvals[eigenvals < 0.0] = 0.0"
assert linecache.getline(SVD, 118).strip() == "vh_mat *= signs[:, None]"
assert linecache.getline(SVD, 117).strip() == "u_mat *= signs[None, :]"


def fit(solver, fit_edits=(), flip_edits=()):
    def go():
        torch.manual_seed(0)
        x = torch.randn(40, 6, requires_grad=True)
        fit_fn = rewritten(pca_main.PCA.fit, list(fit_edits)) if fit_edits else pca_main.PCA.fit
        flip = rewritten(svd.svd_flip, list(flip_edits)) if flip_edits else svd.svd_flip
        with replaced(pca_main.PCA, "fit", fit_fn), replaced(pca_main, "svd_flip", flip):
            model = pca_main.PCA(n_components=3, svd_solver=solver).fit(x)
        (model.components_.square().sum() + model.explained_variance_.sum()).backward()
        assert x.grad is not None
    return go


OOP189 = ("eigenvals[eigenvals < 0.0] = 0.0", "eigenvals = eigenvals.clamp_min(0.0)")
OOP117 = ("u_mat *= signs[None, :]", "u_mat = u_mat * signs[None, :]")
OOP118 = ("vh_mat *= signs[:, None]", "vh_mat = vh_mat * signs[:, None]")
FID = "torch_pca/pca_main.py:189:IPF104"
attempt(FID, "path", "PCA(3, covariance_eigh).fit on data that requires grad, svd_flip's :118 out of place, "
        "backward of the components and variances: raises", fit("covariance_eigh", flip_edits=[OOP118]))
attempt(FID, "control", "the same with :189 out of place (clamp_min): runs",
        fit("covariance_eigh", [OOP189], flip_edits=[OOP118]))
FID = "torch_pca/svd.py:118:IPF101"
attempt(FID, "path", "PCA(3, full).fit on data that requires grad, :117 out of place: raises",
        fit("full", flip_edits=[OOP117]))
attempt(FID, "control", "the same with :118 out of place too: runs", fit("full", flip_edits=[OOP117, OOP118]))
attempt(FID, "context", ":117 as shipped and :118 out of place: raises (svd's saved U written, unproven)",
        fit("full", flip_edits=[OOP118]))
attempt(FID, "path", "covariance_eigh (u_mat None), :189 out of place, :118 as shipped: raises (it writes the "
        "eigenvectors that take_along_dim saved)", fit("covariance_eigh", [OOP189]))
attempt(FID, "control", "the same with :118 out of place: runs", fit("covariance_eigh", [OOP189], flip_edits=[OOP118]))
