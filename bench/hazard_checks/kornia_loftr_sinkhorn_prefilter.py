"""kornia LoFTR `CoarseMatching.forward` (kornia 0.9.0, loftr/utils/coarse_matching.py:224): with
`match_type="sinkhorn"`, in eval mode with `skh_prefilter`, `conf_matrix` (a view of
`assign_matrix = log_assign_matrix.exp()`, whose result ExpBackward saves) gets zeros written into it.

As installed, the sinkhorn branch cannot be built: `CoarseMatching.__init__` imports
`log_optimal_transport` from `kornia.feature.loftr.utils.superglue`, a module kornia does not ship
("download superglue.py first!", as the LoFTR reference code asks its users). This driver supplies
that module (a plain log-space Sinkhorn with a dustbin, written here) to run the branch.

Path: CoarseMatching (sinkhorn, skh_prefilter, eval) on coarse features that require grad, grad on,
stopped right after line 224 ran, backward from `assign_matrix`. Control: stopped after the exp
(line 217), before the write. Context: the module as shipped (ImportError); the whole forward,
backward from `data["conf_matrix"]`; LoFTR's own default config switched to sinkhorn, which lacks the
`sparse_spvs` key read right after the write (KeyError before any backward).
Run: /work/venvs/real/bin/python bench/hazard_checks/kornia_loftr_sinkhorn_prefilter.py
"""

import sys
import types

import torch
from _check import attempt, expect_line, run_through
from kornia.feature.loftr.loftr import default_cfg
from kornia.feature.loftr.utils.coarse_matching import CoarseMatching

FINDING = "kornia/feature/loftr/utils/coarse_matching.py:224:IPF104"
MISSING = "kornia.feature.loftr.utils.superglue"
expect_line(CoarseMatching.forward, 224, "conf_matrix[filter0[..., None].repeat(1, 1, S)] = 0")
expect_line(CoarseMatching.forward, 217, "assign_matrix = log_assign_matrix.exp()")
CONFIG = {**default_cfg["match_coarse"], "match_type": "sinkhorn", "skh_prefilter": True, "sparse_spvs": False}
L = S = 6  # coarse cells of a 2x3 map on each side


def log_optimal_transport(scores, alpha, iters):
    """Log-space Sinkhorn with a dustbin row and column (the role SuperGlue's function plays)."""
    n, m, k = scores.shape
    bins0, bins1 = alpha.expand(n, m, 1), alpha.expand(n, 1, k)
    couplings = torch.cat([torch.cat([scores, bins0], -1), torch.cat([bins1, alpha.expand(n, 1, 1)], -1)], 1)
    norm = -torch.tensor(float(m + k)).log()
    log_mu = torch.cat([norm.expand(m), torch.tensor(float(k)).log()[None] + norm]).expand(n, -1)
    log_nu = torch.cat([norm.expand(k), torch.tensor(float(m)).log()[None] + norm]).expand(n, -1)
    u, v = torch.zeros_like(log_mu), torch.zeros_like(log_nu)
    for _ in range(iters):
        u = log_mu - torch.logsumexp(couplings + v.unsqueeze(1), dim=2)
        v = log_nu - torch.logsumexp(couplings + u.unsqueeze(2), dim=1)
    return couplings + u.unsqueeze(2) + v.unsqueeze(1) - norm


def features():
    torch.manual_seed(0)
    return torch.randn(1, L, 8, requires_grad=True), torch.randn(1, S, 8, requires_grad=True)


def data():
    return {"bs": 1, "stride_c": 8, "stride_f": 2, "hw0_c": torch.Size([2, 3]), "hw1_c": torch.Size([2, 3])}


def as_shipped():
    sys.modules.pop(MISSING, None)
    CoarseMatching(CONFIG)


def with_superglue():
    sys.modules[MISSING] = types.SimpleNamespace(log_optimal_transport=log_optimal_transport)
    return CoarseMatching(CONFIG).eval()


def write():
    scope = run_through(with_superglue().forward, 224, *features(), data())
    scope["assign_matrix"].sum().backward()


def before_write():
    scope = run_through(with_superglue().forward, 217, *features(), data())
    scope["assign_matrix"].sum().backward()


def loftr_default_config():
    """LoFTR's own default_cfg switched to sinkhorn lacks `sparse_spvs`, read right after the write."""
    module = with_superglue()
    module.config = {k: v for k, v in module.config.items() if k != "sparse_spvs"}
    module(*features(), data())


def whole_forward():
    out = data()
    with_superglue()(*features(), out)
    out["conf_matrix"].sum().backward()


attempt(FINDING, "context", "CoarseMatching(match_type='sinkhorn') as kornia ships it", as_shipped,
        expected=(ImportError,))
attempt(FINDING, "path", "sinkhorn CoarseMatching (superglue module supplied), eval, skh_prefilter, features "
        "require grad, stopped after line 224, backward from assign_matrix", write)
attempt(FINDING, "control", "the same, stopped after the exp (line 217), before the write", before_write)
attempt(FINDING, "context", "whole forward (superglue supplied, eval), backward from data['conf_matrix']",
        whole_forward)
attempt(FINDING, "context", "the same with LoFTR's default_cfg['match_coarse'] (no 'sparse_spvs' key)",
        loftr_default_config, expected=(KeyError,))
