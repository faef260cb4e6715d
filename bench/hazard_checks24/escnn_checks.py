"""escnn 1.0.11: the one proven finding of `inplacefix check` (main at e95ccd4, stop 42): `_normalize`
(`escnn/group/groups/_numerical_thomson.py`, line 10) is `X /= torch.norm(X, dim=1, keepdim=True)`;
norm saves its input `X`, which the division then modifies. The path calls `_normalize` on points
computed from a tensor requiring grad and calls backward through the function's `X` after line 10; the control the same with
`X = X / torch.norm(...)` (out of place); the contexts: a leaf requiring grad (PyTorch refuses the
write at once), and escnn's own `_thomson_sphere`, which calls `_normalize` under `torch.no_grad()`
or on a detached copy (runs).

The package imports need lie_learn, pymanopt and more (not installed here); the functions checked
use only torch and numpy, so they are run from the installed file's source (`functions_from`:
names and line numbers kept), with `Adam` and `SGD` set (the file imports them by name)."""

import importlib.util

import _shim  # noqa: F401
import numpy as np
import torch
from _check import attempt, expect_line, stop_after
from _rewrite import functions_from, rewritten

PATH = str(importlib.util.find_spec("escnn").submodule_search_locations[0]) + "/group/groups/_numerical_thomson.py"
LIB = functions_from(PATH, ["_normalize", "_distance_sphere", "_potential_sphere", "_thomson_sphere"])
LIB["Adam"], LIB["SGD"] = torch.optim.Adam, torch.optim.SGD
FINDING = "escnn/group/groups/_numerical_thomson.py:10:IPF101"
expect_line(LIB["_normalize"], 10, "X /= torch.norm(X, dim=1, keepdim=True)")


def normalize(edits=(), leaf=False):
    def run():
        torch.manual_seed(0)
        raw = torch.randn(5, 3, requires_grad=True)
        X = raw if leaf else raw * 2.0
        function = rewritten(LIB["_normalize"], edits) if edits else LIB["_normalize"]
        if leaf:
            function(X)  # refused at once (stop_after would swallow the error at its return event)
            return
        local = stop_after(function, 10, lambda: function(X))  # `X` of the function after line 10
        local["X"].square().sum().backward()
    return run


def library():
    X = LIB["_thomson_sphere"](4, rng=np.random.RandomState(0))
    assert torch.allclose(X.norm(dim=1), torch.ones(4), atol=1e-5)


attempt(FINDING, "path", "_normalize(X), X computed from a tensor requiring grad, stopped after line 10, backward through its X", normalize())
attempt(FINDING, "control", "the same with `X = X / torch.norm(X, dim=1, keepdim=True)` (out of place)",
        normalize([("X /= torch.norm(X, dim=1, keepdim=True)", "X = X / torch.norm(X, dim=1, keepdim=True)")]))
attempt(FINDING, "context", "_normalize(X), X a leaf requiring grad", normalize(leaf=True))
attempt(FINDING, "context", "escnn's _thomson_sphere(4): _normalize under no_grad or on a detached copy", library)
