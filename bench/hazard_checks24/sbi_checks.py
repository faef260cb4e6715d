"""sbi 0.27.0: the six proven findings of `inplacefix check` (2bba8c4 and branch prec45, stop 45).
Each z-scoring helper takes `torch.std` of a batch and then clamps small values in place
(`t_std[t_std < min_std] = min_std`), a write into the result `std` saved for its backward. Each
path hands the helper a batch that requires grad, with grad on, and runs backward from the std it
returns (or stops right after the flagged line: `c2st` goes on into scikit-learn); each control is
the same with the flagged write made out of place (`torch.where`). sbi builds these nets from
simulations (data: no grad): real by this file's convention. The functions are run from the
installed files' source (`functions_from`: `import sbi.utils` needs joblib, scikit-learn and more),
the (De)Standardize modules the nets wrap their statistics in stood in by a holder."""

import _shim  # noqa: F401

import importlib.util

import torch
from _check import attempt, expect_line, stop_after
from _rewrite import functions_from, rewritten

class Held:
    """Stands in for sbi's (De)Standardize modules, which only keep the mean and std as buffers."""

    def __init__(self, mean, std):
        self.mean, self.std = mean, std


ROOT = importlib.util.find_spec("sbi").submodule_search_locations[0]
UTILS = functions_from(ROOT + "/utils/sbiutils.py", ["handle_invalid_x", "z_standardization", "standardizing_net"])
SENS = functions_from(ROOT + "/analysis/sensitivity_analysis.py", ["destandardizing_net"])
METRICS = functions_from(ROOT + "/utils/metrics.py", ["c2st"])
for names in (UTILS, SENS, METRICS):
    names.update({"Tensor": torch.Tensor, "ones": torch.ones, "zeros": torch.zeros, "nn": torch.nn,
                  "handle_invalid_x": UTILS["handle_invalid_x"], "Standardize": Held, "Destandardize": Held,
                  "RandomForestClassifier": object, "MLPClassifier": object})

z_standardization = UTILS["z_standardization"]
standardizing_net = UTILS["standardizing_net"]
destandardizing_net = SENS["destandardizing_net"]
c2st = METRICS["c2st"]
for function, names in ((z_standardization, UTILS), (standardizing_net, UTILS), (destandardizing_net, SENS),
                        (c2st, METRICS)):
    function.__globals__.update(names)
expect_line(z_standardization, 405, "sample_std[sample_std < min_std] = min_std")
expect_line(z_standardization, 411, "t_std[t_std < min_std] = min_std")
expect_line(standardizing_net, 466, "sample_std[sample_std < min_std] = min_std")
expect_line(standardizing_net, 471, "t_std[t_std < min_std] = min_std")
expect_line(destandardizing_net, 54, "t_std[t_std < min_std] = min_std")
expect_line(c2st, 142, "X_std[X_std < 1e-14] = 1")


def batch():
    torch.manual_seed(0)
    data = torch.randn(8, 3)
    data[:, 0] = 5.0  # a constant column: its std is below min_std, so the write runs
    return (data.requires_grad_() * 1.0)


def run_z(function, structured):
    def run():
        mean, std = function(batch(), structured, 1e-7)
        (mean.sum() + std.sum()).backward()
    return run


def run_net(function, structured=None):
    def run():
        args = (batch(),) if structured is None else (batch(), structured)
        net = function(*args)
        std = net._std if hasattr(net, "_std") else net.std
        std.sum().backward()
    return run


def run_c2st(function):
    def run():
        found = stop_after(function, 142, lambda: function(batch(), batch() + 1.0))
        found["X_std"].sum().backward()
    return run


OUT_SAMPLE = ("sample_std[sample_std < min_std] = min_std",
              "sample_std = torch.where(sample_std < min_std, min_std, sample_std)")
OUT_T = ("t_std[t_std < min_std] = min_std", "t_std = torch.where(t_std < min_std, min_std, t_std)")
U = "sbi/utils/sbiutils.py:"
attempt(U + "405:IPF104", "path", "z_standardization(batch requiring grad, structured_dims=True), backward",
        run_z(z_standardization, True))
attempt(U + "405:IPF104", "control", "line 405 out of place", run_z(rewritten(z_standardization, [OUT_SAMPLE]), True))
attempt(U + "411:IPF104", "path", "z_standardization(batch requiring grad, structured_dims=False), backward",
        run_z(z_standardization, False))
attempt(U + "411:IPF104", "control", "line 411 out of place", run_z(rewritten(z_standardization, [OUT_T]), False))
attempt(U + "466:IPF104", "path", "standardizing_net(batch requiring grad, structured_dims=True), backward from its std",
        run_net(standardizing_net, True))
attempt(U + "466:IPF104", "control", "line 466 out of place", run_net(rewritten(standardizing_net, [OUT_SAMPLE]), True))
attempt(U + "471:IPF104", "path", "standardizing_net(batch requiring grad), backward from its std",
        run_net(standardizing_net, False))
attempt(U + "471:IPF104", "control", "line 471 out of place", run_net(rewritten(standardizing_net, [OUT_T]), False))
attempt("sbi/analysis/sensitivity_analysis.py:54:IPF104", "path",
        "destandardizing_net(batch requiring grad), backward from its std", run_net(destandardizing_net))
attempt("sbi/analysis/sensitivity_analysis.py:54:IPF104", "control", "line 54 out of place",
        run_net(rewritten(destandardizing_net, [OUT_T])))
attempt("sbi/utils/metrics.py:142:IPF104", "path", "c2st(X requiring grad, Y) stopped after line 142, backward from X_std",
        run_c2st(c2st))
attempt("sbi/utils/metrics.py:142:IPF104", "control", "line 142 out of place",
        run_c2st(rewritten(c2st, [("X_std[X_std < 1e-14] = 1", "X_std = torch.where(X_std < 1e-14, 1.0, X_std)")])))
