"""darts 0.48.1: the one proven finding of `inplacefix check` (b47935c, stop 46):
`MonteCarloDropout.forward` (utils/torch.py:44) calls `F.dropout(input, self.p, ..., self.inplace)`,
taken to run in place on `FeedForward.forward`'s `g`, the output of `nn.ReLU` (saved by relu for its
backward). `self.inplace` is `nn.Dropout`'s own attribute, False unless the constructor is handed
`inplace=True`; every `MonteCarloDropout(...)` of darts passes the rate only. The path runs
FeedForward's forward as darts builds it (ReLU, `MonteCarloDropout(dropout)`, train mode and mc
dropout on) with inputs requiring grad and calls backward: it runs. The `context` scenario hands
`inplace=True`, which no darts code does: then relu's saved output is written and backward raises.
Run from the installed files' source (`functions_from`: `import darts` needs narwhals, pandas,
sklearn and more)."""

import _shim  # noqa: F401

import importlib.util
import types

import torch
from torch import nn
from _check import attempt, expect_line
from _rewrite import functions_from

FINDING = "darts/utils/torch.py:44:IPF102"
ROOT = importlib.util.find_spec("darts").submodule_search_locations[0]
mc_forward = functions_from(ROOT + "/utils/torch.py", ["MonteCarloDropout.forward"])["MonteCarloDropout.forward"]
ff_forward = functions_from(ROOT + "/models/components/feed_forward.py", ["FeedForward.forward"])["FeedForward.forward"]
expect_line(mc_forward, 44, "return F.dropout(input, self.p, self.mc_dropout_enabled, self.inplace)")


class MonteCarloDropout(nn.Dropout):
    _mc_dropout_enabled = True
    forward = mc_forward

    @property
    def mc_dropout_enabled(self):
        return self._mc_dropout_enabled or self.training


def feed_forward(**dropout_kwargs):
    def run():
        torch.manual_seed(0)
        unit = types.SimpleNamespace(layer1=nn.Linear(4, 8), layer2=nn.Linear(8, 4), activation=nn.ReLU(),
                                     dropout=MonteCarloDropout(0.1, **dropout_kwargs), is_gated=False)
        x = torch.randn(3, 4, requires_grad=True)
        ff_forward(unit, x).sum().backward()
    return run


attempt(FINDING, "path", "FeedForward.forward as darts builds it (nn.ReLU(), MonteCarloDropout(dropout)), x requiring grad, backward",
        feed_forward())
attempt(FINDING, "context", "MonteCarloDropout(0.1, inplace=True): a construction no darts code makes",
        feed_forward(inplace=True))
