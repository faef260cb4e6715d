"""pytorch-gmm 0.1.1 (pytorch_gmm/gmm.py:194, :201, :209, :217 `GMM._em_`): the proven findings of `inplacefix
check` (stop 56, fresh56, end of stop). The E-step takes `llh = r.logsumexp(dim=1, keepdim=True)` (:193), which saves
its input r (and its result) for backward, and then writes r in place: `r.sub_(llh).exp_()` (:194) and
`r.unsqueeze_(2)` (:201 for every covariance kind, again at :209 for block-diagonal and :217 for full covariances;
unsqueeze_ bumps the version counter like any in-place op). Data x that requires grad (the EM step differentiated
with respect to its inputs), backward of the log-likelihood `_em_` returns, raises: real by this file's convention
(an input that requires grad; the library fits GMMs to data without grad). Each line is isolated: the value writes of
:194 go through `.data` (no version bump) and the other unsqueeze_ lines are made out of place (`r = r.unsqueeze(2)`,
a view of the same tensor, whose unsqueeze_ still bumps the shared version counter); the control has all of them so.
`GMM` is compiled alone from the shipped file (tqdm as a plain iterator)."""

import _shim  # noqa: F401
import itertools
import linecache
import math

import numpy as np
import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("pytorch_gmm/gmm.py")
assert linecache.getline(PATH, 194).strip().startswith("r.sub_(llh).exp_()")
for n in (201, 209, 217):
    assert linecache.getline(PATH, n).strip().startswith("r.unsqueeze_(2)"), n
# The M-step's writes of w, mu and sigma, through .data and under no_grad in every scenario: with diagonal
# covariances sigma.copy_ (:214) writes the sigma whose view probability's `div_` saved, which raises on its own
# (unflagged: a miss, the diag context row; :212 and :219, the block and full copies, were not isolated).
M_STEP = {
    198: "with torch.no_grad():\n    self.w.data.copy_(r_sum / n)",
    203: "with torch.no_grad():\n    self.mu.data.copy_((r * x).sum(dim=0)).div_(r_sum)",
    212: "with torch.no_grad():\n    self.sigma.data.copy_(diff.mul(r).sum(dim=0)).div_(r_sum)",
    214: "with torch.no_grad():\n    self.sigma.data.copy_(diff.pow(2).mul(r).sum(dim=0)).div_(r_sum)",
    219: "with torch.no_grad():\n    self.sigma.data.copy_(diff.mul(r).sum(dim=0)).div_(r_sum)",
}
# probability's own log-determinants (block :147, full :158) take the log in place of what the solves saved, and
# full's :156 squeezes cholesky_solve's saved output in place: out of place in every scenario too (unflagged: misses,
# the context rows).
E_STEP = {147: "log_det = log_det.squeeze(0).log().sum(dim=1)",
          156: "log_numer = log_numer.squeeze(3).mul(diff).sum(dim=2)",
          158: "log_det = log_det.diagonal(dim1=1, dim2=2).log().sum(dim=1).mul(2)"}
OFF = {194: "r.data.sub_(llh.detach()).exp_()", 201: "r = r.unsqueeze(2)", 209: "r = r.unsqueeze(2)",
       217: "r = r.unsqueeze(2)"}


def tqdm(it, **kw):
    return it


def run(kind, shipped, m_step=True):
    replace = {n: code for n, code in OFF.items() if n != shipped}
    if m_step:
        replace.update(M_STEP)
        replace.update(E_STEP)
    ns = compile_alone(PATH, {"GMM"}, {"torch": torch, "np": np, "math": math, "itertools": itertools,
                                       "tqdm": tqdm, "log_2pi": math.log(2 * math.pi)}, replace=replace)

    def go():
        torch.manual_seed(0)
        x = torch.randn(30, 4, requires_grad=True)
        k = 2
        w = torch.full((k,), 0.5)
        mu = torch.randn(k, 4)
        if kind == "diag":
            sigma = torch.ones(k, 4)
        elif kind == "block":
            sigma = torch.stack((torch.ones(k, 2), torch.ones(k, 2), torch.full((k, 2), 0.1)), dim=1)
        else:
            sigma = torch.eye(4).repeat(k, 1, 1)
        gmm = ns["GMM"](w, mu, sigma)
        assert gmm.block_diag == (kind == "block")
        llh = gmm._em_(x)
        llh.backward()
        assert x.grad is not None
    return go


for n, kind in ((194, "diag"), (201, "diag"), (209, "block"), (217, "full")):
    FID = f"pytorch_gmm/gmm.py:{n}:IPF103"
    attempt(FID, "path", f"one EM step ({kind} covariances) on data that requires grad, :{n} as shipped, the other "
            "writes of r through .data or out of place, backward of the log-likelihood: raises", run(kind, n))
    attempt(FID, "control", "all of them through .data or out of place: runs", run(kind, None))
for kind in ("diag", "block", "full"):
    attempt("pytorch_gmm/gmm.py:194:IPF103", "context", f"{kind}: the flagged writes of r all off, the M-step as shipped: "
            "raises (sigma.copy_ writes what the E-step saved, and block/full's log_det.log_ what the solves saved; "
            "unflagged)", run(kind, None, m_step=False))
