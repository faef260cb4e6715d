"""deepod 0.4.1 (models/time_series/timesnet.py:165, `TimesNetModel.anomaly_detection`): the proven finding
of `inplacefix check` on main 97a004a (stop 52, fresh52). `stdev = torch.sqrt(torch.var(x_enc, ...) + 1e-5)`
(var saves its input x_enc), then `x_enc /= stdev` writes it. The model classes of the file are compiled alone
from the shipped file (deepod's package imports `deepod.core.base_model`, not needed by the model); the
control rewrites line 165 out of place. Input requiring grad: real by this file's convention (deepod trains
on data windows without grad: the context scenario runs)."""

import _shim  # noqa: F401
import linecache
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from _check import attempt
from _fresh52 import compile_alone, src

SRC = src("deepod/models/time_series/timesnet.py")
assert linecache.getline(SRC, 165).strip() == "x_enc /= stdev"
CLASSES = {"TimesNetModel", "TimesBlock", "DataEmbedding", "PositionalEmbedding", "TokenEmbedding",
           "FixedEmbedding", "TimeFeatureEmbedding", "Inception_Block_V1", "FFT_for_Period"}


def run(replace, grad=True):
    def go():
        ns = compile_alone(SRC, CLASSES, {"torch": torch, "nn": nn, "F": F, "np": np, "math": math}, replace=replace)
        torch.manual_seed(0)
        net = ns["TimesNetModel"](seq_len=16, pred_len=0, enc_in=3, c_out=3, e_layers=1, d_model=8, d_ff=8,
                                  dropout=0.0, top_k=2, num_kernels=2)
        x = torch.randn(2, 16, 3, requires_grad=grad)
        net(x).pow(2).mean().backward()
    return go


F165 = "deepod/models/time_series/timesnet.py:165:IPF101"
attempt(F165, "path", "TimesNetModel forward on a window requiring grad, backward", run({}))
attempt(F165, "control", "line 165 as `x_enc = x_enc / stdev`", run({165: "x_enc = x_enc / stdev"}))
attempt(F165, "context", "a window without grad (deepod's training), parameters requiring grad: runs", run({}, False))
