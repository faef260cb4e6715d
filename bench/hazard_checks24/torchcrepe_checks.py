"""torchcrepe 0.0.24: the one proven finding of `inplacefix check` (main at a4c47fa, stop 44):
`preprocess` (torchcrepe/core.py) normalizes each batch of frames in place: `frames -=
frames.mean(...)`, then `frames /= torch.max(eps, frames.std(dim=1, keepdim=True))` (line 699;
`std` saves its input `frames`, which the `/=` writes). The path runs the generator over audio
that requires grad at the model's 16 kHz (no resampling) and backward through the frames; the
control the same with line 699 out of place (`frames = frames / torch.max(...)`); the context:
torchcrepe's `predict` runs the model under `torch.no_grad()`. The module is run from its source
(`functions_from`: `import torchcrepe` needs torchaudio built for another torch), with a stand-in
module for `resampy` (only `resample` uses it, a path not taken at 16 kHz)."""

import _shim  # noqa: F401

import importlib.util
import sys
import types

import torch
from _check import attempt, expect_line
from _rewrite import functions_from, rewritten

sys.modules.setdefault("resampy", types.ModuleType("resampy"))  # (unused at SAMPLE_RATE)
FINDING = "torchcrepe/core.py:699:IPF101"
PATH = importlib.util.find_spec("torchcrepe").submodule_search_locations[0] + "/core.py"
sys.modules.setdefault("torchcrepe", types.ModuleType("torchcrepe"))  # (core.py's `import torchcrepe`)
NAMES = functions_from(PATH, ["preprocess", "SAMPLE_RATE", "WINDOW_SIZE"])
F = NAMES["preprocess"]
expect_line(F, 694, "frames -= frames.mean(dim=1, keepdim=True)")
expect_line(F, 699, "frames /= torch.max(torch.tensor(1e-10, device=frames.device),")


def frames_of(function, grad=True):
    def run():
        torch.manual_seed(0)
        function.__globals__.update(NAMES)
        audio = torch.randn(1, 4000, requires_grad=grad)
        with torch.set_grad_enabled(grad):
            total = sum(batch.sum() for batch in function(audio * 1.0, NAMES["SAMPLE_RATE"], 160))
        if grad:
            total.backward()
    return run


attempt(FINDING, "path", "preprocess(audio requiring grad, 16 kHz, hop 160), backward through the frames", frames_of(F))
attempt(FINDING, "control", "the same with `frames = frames / torch.max(...)` (line 699 out of place)",
        frames_of(rewritten(F, [("frames /= torch.max(", "frames = frames / torch.max(")])))
attempt(FINDING, "context", "under torch.no_grad() (predict's inference)", frames_of(F, grad=False))
