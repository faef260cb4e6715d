"""Shared by nnts_checks.py and torch_timeseries_checks.py (stop 53, fresh53): the Non-stationary Transformer
normalization of Time-Series-Library models, `means = x.mean(1, keepdim=True).detach(); x = x - means; stdev =
torch.sqrt(torch.var(x, ...) + 1e-5); x /= stdev`. torch.var saves its input x, which `/=` then writes. The method is
compiled alone from the shipped file (a stand-in self with the flags it reads) and stops right after the flagged
line, returning the normalized series; backward runs from its sum. Path: a batch of series that requires grad
(input attribution, adversarial inputs): raises. Control: the flagged line as `x = x / stdev`: runs. Context: the
training loop's batches (no grad): runs."""

import linecache
import types

import numpy as np
import torch
from _check import attempt
from _fresh53 import compile_alone, src, then


def check(relpath, line, method, var, args, flags, stmt=None):
    path = src(relpath)
    shipped = linecache.getline(path, line).strip()
    assert shipped == f"{var} /= stdev", shipped

    def run(replace, grad):
        def go():
            ns = compile_alone(path, {method}, {"torch": torch, "np": np}, replace=replace)
            x = torch.randn(2, 8, 3, requires_grad=grad)
            out = ns[method.split(".")[1]](types.SimpleNamespace(**flags), x, *args)
            if out.requires_grad:
                out.sum().backward()
        return go

    finding = f"{relpath}:{line}:IPF101"
    attempt(finding, "path", f"{method} on series requiring grad, stopped after :{line}, backward",
            run({line: then(shipped, f"return {var}")}, True))
    attempt(finding, "control", f":{line} as `{var} = {var} / stdev`",
            run({line: then(f"{var} = {var} / stdev", f"return {var}")}, True))
    attempt(finding, "context", "a data batch without grad, as shipped (the training loop)",
            run({line: then(shipped, f"return {var}")}, False))
