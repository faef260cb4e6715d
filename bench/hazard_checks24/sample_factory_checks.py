"""sample-factory 2.1.1: the four proven findings of `inplacefix check` on main e0a91e4 (stop 50, prec50b), all in
`RunningMeanStdInPlace.forward` (algo/utils/running_mean_std.py), reported as writing `x` "saved for backward by
`var` at line 73" (`σ2 = x.var(self.axis)`, run only `if self.training and not denormalize`):
- :104 `x.mul_(1 / σ)` (norm_only, not denormalize) and :109 `x.sub_(μ).mul_(1 / σ).clamp_(-clip, clip)` (not
  denormalize): in training the var saved `x`, then written: raise when `x` requires grad (REAL).
- :102 `x.mul_(σ)` and :107 `x.clamp_(-clip, clip).mul_(σ).add_(μ)` are on the `denormalize` arms, where line 73
  never runs (its guard is `not denormalize`, the same flag): nothing saved `x`; backward runs (FALSE).
The module imports gymnasium and sample_factory.utils.utils (`log`), not installed here; they stand as empty
modules (a `log` with `debug`), the file itself is loaded as it is from the unpacked wheel under $PREC50B_SITE2
(default /work/tmp/prec50b/pk2). `x` is a non-leaf requiring grad (the output of a layer), the module in
training. As shipped, such an `x` first raises on another tensor: the running-stat update saves `self.count` in
`var * count` and then writes `self.count[:]` (DoubleTensor [1]); the path scenarios hand the update a copy of the
count (a wrapper on the instance, the forward unchanged; the moments stay attached, so the batch var reaches the
loss through the running stats, μ and σ) so that only the reported write can raise: the error then names the
FloatTensor [6, 4] `x`, output of Mul, saved by var. Context: sample-factory normalizes observations and
returns (`normalize_input`/`normalize_returns`) on data that does not require grad: real by this file's convention (an input requiring grad raises)."""

import _shim  # noqa: F401
import importlib.util
import os
import sys
import types

import torch
from _check import attempt, expect_line

for name in ("gymnasium", "sample_factory", "sample_factory.utils", "sample_factory.utils.utils"):
    sys.modules.setdefault(name, types.ModuleType(name))
sys.modules["gymnasium"].spaces = types.SimpleNamespace(Dict=dict)
sys.modules["sample_factory.utils.utils"].log = types.SimpleNamespace(debug=lambda *a, **k: None)
PATH = os.path.join(os.environ.get("PREC50B_SITE2", "/work/tmp/prec50b/pk2"), "sample_factory", "algo", "utils",
                    "running_mean_std.py")
spec = importlib.util.spec_from_file_location("prec50b_rms", PATH)
rms = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rms)
RMS = rms.RunningMeanStdInPlace
for line, text in ((73, "σ2 = x.var(self.axis)"), (102, "x.mul_(σ)"), (104, "x.mul_(1 / σ)"),
                   (107, "x.clamp_(-clip, clip).mul_(σ).add_(μ)"),
                   (109, "x.sub_(μ).mul_(1 / σ).clamp_(-clip, clip)")):
    expect_line(RMS.forward, line, text)
BASE = "sample_factory/algo/utils/running_mean_std.py"


def run(norm_only, denormalize, training=True, detached_stats=True):
    def go():
        torch.manual_seed(0)
        norm = RMS((4,), norm_only=norm_only).train(training)
        if detached_stats:  # the update handed a copy of count (the moments stay attached): only x can raise
            update = norm._update_mean_var_count_from_moments
            norm._update_mean_var_count_from_moments = lambda m, v, c, *rest: update(m, v, c.clone(), *rest)
        w = torch.randn(4, requires_grad=True)
        x = torch.randn(6, 4) * w  # a layer's output: a non-leaf requiring grad
        norm(x, denormalize)
        x.pow(2).sum().backward()
    return go


attempt(f"{BASE}:104:IPF103", "path", "norm_only=True, training, x requiring grad, forward(x), backward",
        run(True, False))
attempt(f"{BASE}:109:IPF103", "path", "norm_only=False, training, x requiring grad, forward(x), backward",
        run(False, False))
attempt(f"{BASE}:104:IPF103", "control", "norm_only=True, eval (line 73 skipped)", run(True, False, training=False))
attempt(f"{BASE}:109:IPF103", "control", "norm_only=False, eval (line 73 skipped)", run(False, False, training=False))
attempt(f"{BASE}:104:IPF103", "context", "as shipped (moments not detached): raises first on `self.count` (saved by "
        "`var * count` in the update, then `self.count[:] = ...`), another hazard the check does not report",
        run(True, False, detached_stats=False))
attempt(f"{BASE}:102:IPF103", "path", "norm_only=True, training, forward(x, denormalize=True), backward",
        run(True, True))
attempt(f"{BASE}:107:IPF103", "path", "norm_only=False, training, forward(x, denormalize=True), backward",
        run(False, True))
