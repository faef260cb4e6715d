"""catalyst 22.4: the one proven finding of `inplacefix check` on main d1b4fd6 (stop 51, prec51b):
`masked_cmc_score` (metrics/functional/_cmc_score.py) takes `distances = torch.cdist(query, gallery)` (line 167,
cdist saves its output) then writes `distances[~available_samples] = float("inf")` (line 168) and returns
`cmc_score_count(distances, ...)`, which reads distances only through `torch.argsort` (integral indices) and
returns a Python float (`.mean().item()`). The two functions are compiled alone from the shipped file (catalyst's
package import needs more than torch). Path: masked_cmc_score(query and gallery embeddings requiring grad,
an identity conformity matrix, available_samples False on two of its own-identity entries): the result is a float, nothing of it can run backward;
the driver then runs backward from the embeddings (runs). Control: line 169 returning
`torch.sort(distances).values[:, 0].sum()` (the written distances' values read by a backward): raises.
False: the written output only reaches argsort (indices), so cdist's backward never runs."""

import _shim  # noqa: F401
import linecache
import os

import torch
from _check import attempt
from _prec51b import PK, compile_alone

SRC = os.path.join(PK, "catalyst/metrics/functional/_cmc_score.py")
assert 'distances[~available_samples] = float("inf")' in linecache.getline(SRC, 168)
FINDING = "catalyst/metrics/functional/_cmc_score.py:168:IPF104"


def inputs():
    torch.manual_seed(0)
    q = torch.randn(3, 4, requires_grad=True)
    g = torch.randn(3, 4, requires_grad=True)
    conf = torch.eye(3)
    avail = torch.tensor([[False, True, True], [True, True, True], [True, True, False]])
    return q, g, conf, avail


def path():
    ns = compile_alone(SRC, {"cmc_score_count", "masked_cmc_score"}, {"torch": torch})
    q, g, conf, avail = inputs()
    score = ns["masked_cmc_score"](q, g, conf, avail, topk=1)
    assert isinstance(score, float)
    # nothing left to differentiate: the embeddings' grads stay unset
    (q.sum() + g.sum()).backward()
    assert q.grad is not None


def values_read():
    ns = compile_alone(SRC, {"cmc_score_count", "masked_cmc_score"}, {"torch": torch},
                       replace={169: "return torch.sort(distances).values[:, 0].sum()"})
    q, g, conf, avail = inputs()
    ns["masked_cmc_score"](q, g, conf, avail, topk=1).backward()


attempt(FINDING, "path", "masked_cmc_score(embeddings requiring grad, available_samples with False), "
        "returns a float; backward through the embeddings", path)
attempt(FINDING, "control", "the same with line 169 returning sorted distances' values (read), backward",
        values_read)
