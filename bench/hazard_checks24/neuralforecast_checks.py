"""neuralforecast 3.3.0: the proven findings of `inplacefix check` (main at 4bb8c00, stop 35): the
Non-stationary-Transformer normalisation `x_enc /= stdev` in iTransformer, SOFTS, SOFTSSharp and
TimeXer, after `stdev = sqrt(var(x_enc) + eps)` (var saves its input, x_enc). Each runs `forecast`
with a lookback window that requires grad, then backward; the control is the same forecast with the
line made out of place (`x_enc = x_enc / stdev`); the context is how the library trains it (the
window is data, nothing requires grad but the parameters).

neuralforecast/__init__.py imports ray (not installed): the package is entered without running it."""

import importlib.util
import sys
import types

import _shim  # noqa: F401
import torch
from _check import attempt, expect_line
from _rewrite import replaced, rewritten

_spec = importlib.util.find_spec("neuralforecast")
_package = types.ModuleType("neuralforecast")
_package.__path__ = list(_spec.submodule_search_locations)
sys.modules["neuralforecast"] = _package

from neuralforecast.models.itransformer import iTransformer  # noqa: E402
from neuralforecast.models.softs import SOFTS  # noqa: E402
from neuralforecast.models.softssharp import SOFTSSharp  # noqa: E402
from neuralforecast.models.timexer import TimeXer  # noqa: E402

SMALL = dict(h=2, input_size=16, n_series=3, hidden_size=8, e_layers=1, d_ff=8, dropout=0.0)
MODELS = [
    ("neuralforecast/models/itransformer.py:228:IPF101", iTransformer, 228, dict(n_heads=2, d_layers=1)),
    ("neuralforecast/models/softs.py:248:IPF101", SOFTS, 248, dict(d_core=4)),
    ("neuralforecast/models/softssharp.py:265:IPF101", SOFTSSharp, 265, dict(d_core=4)),
    ("neuralforecast/models/timexer.py:351:IPF101", TimeXer, 351, dict(n_heads=2, patch_len=4)),
]
OUT_OF_PLACE = [("x_enc /= stdev", "x_enc = x_enc / stdev")]


def forecast(cls, extra, window_grad, edits=()):
    def run():
        torch.manual_seed(0)
        model = cls(**SMALL, **extra)
        window = torch.randn(4, 16, 3, requires_grad=window_grad)
        args = (window, None) if cls is TimeXer else (window,)
        with replaced(cls, "forecast", rewritten(cls.forecast, edits)):
            model.forecast(*args).sum().backward()
    return run


for finding, cls, line, extra in MODELS:
    expect_line(cls.forecast, line, "x_enc /= stdev")
    attempt(finding, "path", f"{cls.__name__}.forecast, lookback window requiring grad, backward",
            forecast(cls, extra, True))
    attempt(finding, "control", f"the same with `x_enc = x_enc / stdev` (out of place)",
            forecast(cls, extra, True, OUT_OF_PLACE))
    attempt(finding, "context", f"{cls.__name__}.forecast as trained: the window is data (no grad), backward",
            forecast(cls, extra, False))
