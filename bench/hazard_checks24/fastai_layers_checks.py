"""fastai 2.8.x `layers.py:196`, `sigmoid_`: `return input.sigmoid_().clamp_(eps, 1 - eps)`, proven at stop
52 by the chain fact (`sigmoid_` saves its result, the tensor itself, and the chained `clamp_` then modifies
it). The path runs the shipped function on a tensor computed from a leaf that requires grad and calls backward:
it raises. The control runs fastai's own out-of-place `sigmoid` (line 191) on the same input: it runs. fastai's
own use: `sigmoid_` is exported for in-place use on activations; where its input requires grad it raises, so
real by this file's convention (an input that requires grad raises).

Run from the installed file's own source (`functions_from`: names and line numbers kept); the package imports
need matplotlib."""

import importlib.util

import _shim  # noqa: F401
import torch
from _check import expect_line
from _rewrite import functions_from

PATH = str(importlib.util.find_spec("fastai").submodule_search_locations[0]) + "/layers.py"
LIB = functions_from(PATH, ["sigmoid", "sigmoid_"])
expect_line(LIB["sigmoid_"], 196, "return input.sigmoid_().clamp_(eps,1-eps)")


def run(fn) -> str:
    w = torch.randn(4, requires_grad=True)
    try:
        fn(w * 1).sum().backward()
    except RuntimeError as exc:
        if "modified by an inplace operation" in str(exc):
            return "raises"
        raise
    return "runs"


if __name__ == "__main__":
    shipped, control = run(LIB["sigmoid_"]), run(LIB["sigmoid"])
    print("fastai/layers.py:196:IPF103", "shipped", shipped, "control", control)
    assert (shipped, control) == ("raises", "runs")
