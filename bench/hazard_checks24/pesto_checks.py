"""pesto-pitch 2.0.1 (pesto/model.py:243, :253, `PESTO.forward`): the two proven findings of `inplacefix check` on
main 97a004a (stop 52, fresh52). `squeeze_` is an in-place view op: it bumps the version counter of the tensor
(and of the base it views), so it breaks a saved output like a write does.
- :243 `energy = x.mul_(log(10) / 10.).exp().squeeze_(1)`: exp saves its output; `vol` and the confidence
  classifier read `energy`. Raises with a waveform requiring grad.
- :253 `confidence.squeeze_(0)` (a 1-D waveform): `confidence` is `torch.sigmoid(...).squeeze(-1)`, a view of
  sigmoid's saved output. The confidence classifier's own parameters require grad, so it raises whenever the
  forward runs with grad on, which `pesto.predict(..., no_grad=False)` (a documented option) does; the default
  (inference mode) does not: the context runs.
`PESTO` and `ConfidenceClassifier` are compiled alone from the shipped file (pesto's package imports scipy and
tqdm); `CropCQT` and `reduce_activations` are loaded from their files (torch only). Stand-ins: the preprocessor
(framed waveform to dB, 249 bins, one harmonic, as the confidence classifier's Linear(72) needs) and the encoder
(a Linear over the cropped bins to 128 softmax bins)."""

import _shim  # noqa: F401
import importlib.util
import linecache
from functools import partial
from math import log
from typing import Any, Mapping, Optional, Tuple, Union

import torch
import torch.nn as nn
import torch.nn.functional as F
from _check import attempt
from _fresh52 import compile_alone, src

SRC = src("pesto/model.py")
assert linecache.getline(SRC, 243).strip() == "energy = x.mul_(log(10) / 10.).exp().squeeze_(1)"
assert linecache.getline(SRC, 253).strip() == "confidence.squeeze_(0)"


def load(rel, name):
    spec = importlib.util.spec_from_file_location(name, src(rel))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


CropCQT = load("pesto/utils/crop_cqt.py", "pesto_crop").CropCQT
reduce_activations = load("pesto/utils/reduce_activations.py", "pesto_reduce").reduce_activations
BINS, HOP = 249, 100


class Pre(nn.Module):
    hcqt_kwargs = {"bins_per_semitone": 1}
    hop_size = 10.0

    def forward(self, audio, sr=None):
        frames = audio.unfold(-1, BINS, HOP)  # (batch?, T, BINS)
        db = 10 * torch.log10(frames.abs() + 1e-3)
        return db.unsqueeze(-2) if audio.ndim == 2 else db.unsqueeze(0).unsqueeze(-2)  # (B, T, 1, BINS)


class Enc(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(BINS - 20, 128)

    def forward(self, x):
        return self.fc(x.flatten(1)).softmax(-1)


def run(audio_shape, audio_grad, replace, grad=True):
    def go():
        ns = compile_alone(SRC, {"PESTO", "ConfidenceClassifier"},
                           {"torch": torch, "nn": nn, "F": F, "log": log, "partial": partial, "Any": Any,
                            "Mapping": Mapping, "Optional": Optional, "Tuple": Tuple, "Union": Union,
                            "CropCQT": CropCQT, "reduce_activations": reduce_activations}, replace=replace)
        torch.manual_seed(0)
        model = ns["PESTO"](Enc(), Pre(), crop_kwargs={"min_steps": -10, "max_steps": 10})
        audio = torch.randn(*audio_shape, requires_grad=audio_grad)
        with torch.set_grad_enabled(grad):
            preds, confidence, vol, act = model(audio, sr=16000)
        if grad:
            (preds.sum() + confidence.sum() + vol.sum()).backward()
    return go


F243, F253 = "pesto/model.py:243:IPF103", "pesto/model.py:253:IPF103"
attempt(F243, "path", "PESTO forward on a batch of 2 waveforms requiring grad (line 253 not reached), backward",
        run((2, 2000), True, {}))
attempt(F243, "control", "line 243 with `.squeeze(1)`", run((2, 2000), True, {243: "energy = x.mul_(log(10) / 10.).exp().squeeze(1)"}))
attempt(F253, "path", "PESTO forward on one 1-D waveform without grad, grad on (predict's no_grad=False), backward",
        run((2000,), False, {}))
attempt(F253, "control", "line 253 as `confidence = confidence.squeeze(0)`", run((2000,), False, {253: "confidence = confidence.squeeze(0)"}))
attempt(F253, "context", "the same under no_grad (predict's default): runs", run((2000,), False, {}, grad=False))
