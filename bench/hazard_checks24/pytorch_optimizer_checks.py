"""pytorch-optimizer 4.1.0: the sixteen proven findings of `inplacefix check` (2bba8c4 and branch
prec45, stop 45). Each is a helper of an optimizer (gradient clipping, normalisation, Scion's
norms, Muon's Newton-Schulz, PSGD) that writes in place into what a norm, std, sqrt or abs saved
(its input or its result). Each path runs the helper on a tensor that requires grad (a non-leaf:
`w * 1.0`) with grad on and calls backward; each control is the same with the flagged line made
out of place (`rewritten`). The library calls these inside `optimizer.step()`, under
`torch.no_grad()`, on gradients that require no grad: real by this file's convention.
`zero_power_via_newton_schulz_5` iterates with `out=` ops that refuse inputs requiring grad, so its
paths stop right after the flagged line (`stop_after`) and run backward from there."""

import _shim  # noqa: F401

import math

import torch
from _check import attempt, expect_line, stop_after
from _rewrite import rewritten

import importlib
agc_module = importlib.import_module("pytorch_optimizer.optimizer.agc")
from pytorch_optimizer.optimizer import scion
from pytorch_optimizer.optimizer.muon.adamuon import AdaMuon
from pytorch_optimizer.optimizer.utils import gradient, matrix, psgd

P = "pytorch_optimizer/optimizer/"


def leafless(*shape):
    torch.manual_seed(0)
    return torch.randn(*shape, requires_grad=True) * 1.0


# ---- agc.py:22, :23 (agc: unit_norm(...) is a norm's result, clamped in place)
agc = agc_module.agc
expect_line(agc, 22, "max_norm = unit_norm(p).clamp_min_(agc_eps).mul_(agc_clip_val)")
expect_line(agc, 23, "g_norm = unit_norm(grad).clamp_min_(eps)")
OUT22 = [("unit_norm(p).clamp_min_(agc_eps).mul_(agc_clip_val)", "unit_norm(p).clamp_min(agc_eps).mul(agc_clip_val)")]
OUT23 = [("unit_norm(grad).clamp_min_(eps)", "unit_norm(grad).clamp_min(eps)")]


def run_agc(function, p_grad, g_grad):
    def run():
        p = leafless(4, 3) if p_grad else torch.randn(4, 3)
        g = leafless(4, 3) if g_grad else torch.randn(4, 3)
        function(p, g).sum().backward()
    return run


attempt(P + "agc.py:22:IPF103", "path", "agc(p requiring grad, grad), backward", run_agc(agc, True, False))
attempt(P + "agc.py:22:IPF103", "control", "line 22 out of place", run_agc(rewritten(agc, OUT22), True, False))
attempt(P + "agc.py:23:IPF103", "path", "agc(p, grad requiring grad), backward", run_agc(agc, False, True))
attempt(P + "agc.py:23:IPF103", "control", "line 23 out of place", run_agc(rewritten(agc, OUT23), False, True))

# ---- scion.py:83, :85 (Col.init), :132, :134 (Row.init): x.div_(x.norm(...)) writes what norm saved
col_init = scion.Col.init
expect_line(col_init, 83, "x.div_(x.norm(dim=0, keepdim=True)).mul_(math.sqrt(x.size(0)))")
expect_line(col_init, 85, "x.div_(x.size(1))")
row_init = scion.Row.init
expect_line(row_init, 132, "x.div_(x.norm(dim=-1, keepdim=True))")
expect_line(row_init, 134, "x.div_(math.sqrt(x.size(-1)))")


def run_init(cls, function, normalized):
    def run():
        norm = cls(normalized=normalized)
        function(norm, leafless(4, 3)).sum().backward()
    return run


OUT83 = [("x.div_(x.norm(dim=0, keepdim=True)).mul_(math.sqrt(x.size(0)))",
          "x = x.div(x.norm(dim=0, keepdim=True)).mul(math.sqrt(x.size(0)))")]
OUT132 = [("x.div_(x.norm(dim=-1, keepdim=True))", "x = x.div(x.norm(dim=-1, keepdim=True))")]
attempt(P + "scion.py:83:IPF103", "path", "Col(normalized=False).init(x requiring grad), backward",
        run_init(scion.Col, col_init, False))
attempt(P + "scion.py:83:IPF103", "control", "line 83 out of place", run_init(scion.Col, rewritten(col_init, OUT83), False))
attempt(P + "scion.py:85:IPF103", "path", "Col(normalized=True).init(x requiring grad), backward (line 83 writes the "
        "same saved x first: not isolated)", run_init(scion.Col, col_init, True))
attempt(P + "scion.py:85:IPF103", "control", "line 83 out of place: line 85 then writes a new tensor nothing saved",
        run_init(scion.Col, rewritten(col_init, OUT83), True))
attempt(P + "scion.py:132:IPF103", "path", "Row(normalized=False).init(x requiring grad), backward",
        run_init(scion.Row, row_init, False))
attempt(P + "scion.py:132:IPF103", "control", "line 132 out of place",
        run_init(scion.Row, rewritten(row_init, OUT132), False))
attempt(P + "scion.py:134:IPF103", "path", "Row(normalized=True).init(x requiring grad), backward (line 132 writes the "
        "same saved x first: not isolated)", run_init(scion.Row, row_init, True))
attempt(P + "scion.py:134:IPF103", "control", "line 132 out of place: line 134 then writes a new tensor nothing saved",
        run_init(scion.Row, rewritten(row_init, OUT132), True))

# ---- scion.py:148 (Row.lmo, normalized), :166 (BiasRMS.lmo): sqrt's result written
row_lmo = scion.Row.lmo
expect_line(row_lmo, 148, "rms_value.mul_(math.sqrt(grad.size(-1)))")
bias_lmo = scion.BiasRMS.lmo
expect_line(bias_lmo, 166, "return grad / rms_value.add_(eps)")


def run_lmo(cls, function, **kw):
    def run():
        function(cls(**kw), leafless(4, 3)).sum().backward()
    return run


attempt(P + "scion.py:148:IPF103", "path", "Row(normalized=True).lmo(grad requiring grad), backward",
        run_lmo(scion.Row, row_lmo, normalized=True))
attempt(P + "scion.py:148:IPF103", "control", "line 148 out of place (and line 150's add_, which writes the same "
        "result, too)", run_lmo(scion.Row, rewritten(row_lmo, [
            ("rms_value.mul_(math.sqrt(grad.size(-1)))", "rms_value = rms_value.mul(math.sqrt(grad.size(-1)))"),
            ("grad = grad / rms_value.add_(eps)", "grad = grad / rms_value.add(eps)")]), normalized=True))
attempt(P + "scion.py:166:IPF103", "path", "BiasRMS().lmo(grad requiring grad), backward", run_lmo(scion.BiasRMS, bias_lmo))
attempt(P + "scion.py:166:IPF103", "control", "line 166 out of place",
        run_lmo(scion.BiasRMS, rewritten(bias_lmo, [("rms_value.add_(eps)", "rms_value.add(eps)")])))

# ---- muon/adamuon.py:160 (AdaMuon._update_norm): the norm's result written
update_norm = AdaMuon._update_norm
expect_line(update_norm, 160, "return norm.add_(eps)")


def run_update_norm(function):
    def run():
        function(leafless(4, 3), 1e-8).backward()
    return run


attempt(P + "muon/adamuon.py:160:IPF103", "path", "AdaMuon._update_norm(update requiring grad), backward",
        run_update_norm(update_norm))
attempt(P + "muon/adamuon.py:160:IPF103", "control", "line 160 out of place",
        run_update_norm(rewritten(update_norm, [("return norm.add_(eps)", "return norm.add(eps)")])))

# ---- utils/gradient.py:26, :27 (channels), :29, :30 (whole): std's result, then std's input, written
normalize = gradient.normalize_gradient
expect_line(normalize, 26, "s = x.std(dim=tuple(range(1, size)), keepdim=True).add_(epsilon)")
expect_line(normalize, 27, "x.div_(s)")
expect_line(normalize, 29, "s = x.std().add_(epsilon)")
expect_line(normalize, 30, "x.div_(s)")
OUT26 = ("s = x.std(dim=tuple(range(1, size)), keepdim=True).add_(epsilon)",
         "s = x.std(dim=tuple(range(1, size)), keepdim=True).add(epsilon)")
OUT29 = ("s = x.std().add_(epsilon)", "s = x.std().add(epsilon)")
BOTH29 = ("s = x.std().add_(epsilon)\n        x.div_(s)", "s = x.std().add(epsilon)\n        x = x.div(s)")


def run_stopped(function, line, channels):
    def run():
        x = leafless(4, 3)
        found = stop_after(function, line, lambda: function(x, use_channels=channels))
        found["s"].sum().backward()
    return run


def run_normalize(function, channels):
    def run():
        x = leafless(4, 3)
        function(x, use_channels=channels)
        x.sum().backward()
    return run


attempt(P + "utils/gradient.py:26:IPF103", "path", "normalize_gradient(x requiring grad, use_channels=True) stopped "
        "after line 26 (isolated from line 27), backward from s: line 26 wrote std's saved result",
        run_stopped(normalize, 26, True))
attempt(P + "utils/gradient.py:26:IPF103", "control", "line 26 out of place", run_stopped(rewritten(normalize, [OUT26]), 26, True))
attempt(P + "utils/gradient.py:27:IPF103", "path", "line 26 out of place (isolated): line 27 writes std's saved input",
        run_normalize(rewritten(normalize, [OUT26]), True))
attempt(P + "utils/gradient.py:27:IPF103", "control", "lines 26 and 27 out of place",
        run_normalize(rewritten(normalize, [OUT26, ("        x.div_(s)\n    elif", "        x = x.div(s)\n    elif")]), True))
attempt(P + "utils/gradient.py:29:IPF103", "path", "normalize_gradient(x requiring grad, use_channels=False) stopped "
        "after line 29 (isolated from line 30), backward from s: line 29 wrote std's saved result",
        run_stopped(normalize, 29, False))
attempt(P + "utils/gradient.py:29:IPF103", "control", "line 29 out of place", run_stopped(rewritten(normalize, [OUT29]), 29, False))
attempt(P + "utils/gradient.py:30:IPF103", "path", "line 29 out of place (isolated): line 30 writes std's saved input",
        run_normalize(rewritten(normalize, [OUT29]), False))
attempt(P + "utils/gradient.py:30:IPF103", "control", "lines 29 and 30 out of place",
        run_normalize(rewritten(normalize, [BOTH29]), False))

# ---- utils/matrix.py:343, :344 (zero_power_via_newton_schulz_5): the norm's result, then its input
ns5 = matrix.zero_power_via_newton_schulz_5
expect_line(ns5, 343, "norm.mul_(safety_factor)")
expect_line(ns5, 344, "x.div_(norm.clamp_min_(eps))")


def run_ns5(function, line, safety, name):
    def run():
        g = leafless(4, 3)
        found = stop_after(function, line, lambda: function(g, safety_factor=safety, dtype=torch.float32))
        found[name].sum().backward()
    return run


attempt(P + "utils/matrix.py:343:IPF103", "path", "safety_factor=0.5, g requiring grad, stopped after line 343, "
        "backward from the norm", run_ns5(ns5, 343, 0.5, "norm"))
attempt(P + "utils/matrix.py:343:IPF103", "control", "line 343 out of place",
        run_ns5(rewritten(ns5, [("norm.mul_(safety_factor)", "norm = norm.mul(safety_factor)")]), 343, 0.5, "norm"))
attempt(P + "utils/matrix.py:344:IPF103", "path", "safety_factor=1.0 (line 343 not run), stopped after line 344, "
        "backward from x", run_ns5(ns5, 344, 1.0, "x"))
attempt(P + "utils/matrix.py:344:IPF103", "control", "line 344 out of place",
        run_ns5(rewritten(ns5, [("x.div_(norm.clamp_min_(eps))", "x = x.div(norm.clamp_min(eps))")]), 344, 1.0, "x"))

# ---- utils/psgd.py:39 (norm_lower_bound): abs saved `a`, which the div_ writes
lower = psgd.norm_lower_bound
expect_line(lower, 39, "a.div_(torch.where(max_abs > 0, max_abs, 1.0))")


def run_lower(function):
    def run():
        function(leafless(4, 3)).backward()
    return run


attempt(P + "utils/psgd.py:39:IPF103", "path", "norm_lower_bound(a requiring grad), backward", run_lower(lower))
attempt(P + "utils/psgd.py:39:IPF103", "control", "line 39 out of place",
        run_lower(rewritten(lower, [("a.div_(torch.where(max_abs > 0, max_abs, 1.0))",
                                     "a = a.div(torch.where(max_abs > 0, max_abs, 1.0))")])))
_ = math
