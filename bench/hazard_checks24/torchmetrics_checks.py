"""torchmetrics: the proven findings of `inplacefix check` after issue 24's changes (and
minkowski's `.pow(1.0 / exponent)`, which they removed). Inputs require grad; backward."""

import _shim  # noqa: F401
import torch
from _check import attempt, expect_line
from torchmetrics.functional.clustering.davies_bouldin_score import davies_bouldin_score
from torchmetrics.functional.pairwise.minkowski import _pairwise_minkowski_distance_update
from torchmetrics.functional.shape.procrustes import procrustes_disparity

expect_line(davies_bouldin_score, 63, 'centroid_distances[centroid_distances == 0] = float("inf")')


def dbs():
    torch.manual_seed(0)
    data = torch.randn(6, 2, requires_grad=True)
    davies_bouldin_score(data, torch.tensor([0, 0, 1, 1, 2, 2])).backward()


attempt("torchmetrics/functional/clustering/davies_bouldin_score.py:63:IPF104", "path",
        "davies_bouldin_score(data requiring grad)", dbs)

expect_line(procrustes_disparity, 45, "point_cloud1 /= linalg.norm(point_cloud1, dim=[1, 2], keepdim=True)")


def procrustes(which):
    def run():
        torch.manual_seed(0)
        a = torch.randn(2, 5, 3, requires_grad=which in (1, 3))
        b = torch.randn(2, 5, 3, requires_grad=which in (2, 3))
        procrustes_disparity(a, b).sum().backward()
    return run


attempt("torchmetrics/functional/shape/procrustes.py:45:IPF101", "path", "procrustes_disparity(first cloud requiring grad)",
        procrustes(1))
attempt("torchmetrics/functional/shape/procrustes.py:46:IPF101", "path", "procrustes_disparity(second cloud requiring grad)",
        procrustes(2))

expect_line(_pairwise_minkowski_distance_update, 45, "distance.fill_diagonal_(0)")
attempt("torchmetrics/functional/pairwise/minkowski.py:45:IPF103", "path", "minkowski distance, zero_diagonal, x requiring grad",
        lambda: _pairwise_minkowski_distance_update(torch.randn(3, 2, requires_grad=True), None, 3, True).sum().backward())
