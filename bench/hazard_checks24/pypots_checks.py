"""pypots 1.5: the four proven findings of `inplacefix check` (eafcde2, stop 47), each an in-place
division by the standard deviation after `torch.var` or `x * x` saved the tensor divided:
`nonstationary_norm` (nn/functional/normalization.py:60) and `BackboneGPT4TS.imputation`,
`.forecast`, `.anomaly_detection` (nn/modules/gpt4ts/backbone.py:107, 130, 168). `import pypots`
needs pandas, narwhals, h5py and more: normalization.py is loaded alone (it imports only torch), the
three methods run from the installed file's source (`functions_from`) with a stand-in `self`, and are
stopped right after the flagged line (`run_through`); backward then goes from the tensor written.
The path has the series requiring grad; the control the line out of place.
Labels: normalization.py:60 real (the masked branch the finding names; without a mask the saving
`torch.var` feeds only a `.detach()`ed stdev, so nothing saved is used), backbone.py:130 and :168
real, backbone.py:107 false: `x_enc * x_enc` (line 105) feeds only `stdev`, which line 106 rebinds
to `stdev.unsqueeze(1).detach()`, so the product's backward never runs (group
saved-by-detached-result)."""

import _shim  # noqa: F401

import importlib.util
import types

import einops
import torch
from _check import attempt, expect_line, run_through
from _rewrite import functions_from, rewritten

ROOT = importlib.util.find_spec("pypots").submodule_search_locations[0]
spec = importlib.util.spec_from_file_location("pypots_normalization", ROOT + "/nn/functional/normalization.py")
normalization = importlib.util.module_from_spec(spec)
spec.loader.exec_module(normalization)
norm = normalization.nonstationary_norm
expect_line(norm, 60, "X_enc /= stdev")

FINDING = "pypots/nn/functional/normalization.py:60:IPF101"
for masked in (False, True):
    def path(function=norm, masked=masked):
        torch.manual_seed(0)
        X = torch.randn(2, 6, 3, requires_grad=True)
        mask = (torch.rand(2, 6, 3) > 0.3).float() if masked else None
        X_enc, means, stdev = function(X, mask)
        X_enc.sum().backward()

    how = "with a missing mask" if masked else "without a missing mask"
    # The finding names line 57's `X_enc * X_enc` (the masked branch); without a mask `torch.var`'s
    # result reaches only `.detach()`, so its saved X_enc is never used: context.
    attempt(FINDING, "path" if masked else "context", "nonstationary_norm(X requiring grad, %s), backward" % how, path)
    control = rewritten(norm, [("X_enc /= stdev", "X_enc = X_enc / stdev")])
    attempt(FINDING, "control", "line 60 out of place, %s" % how, lambda: path(control))

BACKBONE = ROOT + "/nn/modules/gpt4ts/backbone.py"
names = ["BackboneGPT4TS.imputation", "BackboneGPT4TS.forecast", "BackboneGPT4TS.anomaly_detection"]
ns = functions_from(BACKBONE, names)
ns["rearrange"] = einops.rearrange
cases = {
    107: ("BackboneGPT4TS.imputation", "x_enc /= stdev", True),
    130: ("BackboneGPT4TS.forecast", "x_enc /= stdev", False),
    168: ("BackboneGPT4TS.anomaly_detection", "x_enc /= stdev\n    x_enc = rearrange", False),
}
for line, (name, text, with_mask) in cases.items():
    method = ns[name]
    expect_line(method, line, text.split("\n")[0])
    finding = "pypots/nn/modules/gpt4ts/backbone.py:%d:IPF101" % line

    def path(function=method, line=line, with_mask=with_mask):
        torch.manual_seed(0)
        x = torch.randn(2, 50, 3, requires_grad=True)
        args = (x, None, (torch.rand(2, 50, 3) > 0.3).float()) if with_mask else \
            ((x, None) if "forecast" in function.__name__ else (x,))
        local = run_through(function, line, types.SimpleNamespace(), *args)
        local["x_enc"].sum().backward()

    attempt(finding, "path", "%s(x_enc requiring grad), stopped after line %d, backward" % (name, line), path)
    control = rewritten(method, [(text, text.replace("x_enc /= stdev", "x_enc = x_enc / stdev"))])
    attempt(finding, "control", "line %d out of place" % line, lambda: path(control))
