"""terratorch 1.2.13 (models/backbones/terramind/tokenizer/scheduling/scheduling_utils.py:47, :49;
`enforce_zero_terminal_snr`, adapted from apple/ml-4m): the proven findings of `inplacefix check` on main f57423a
(stop 52, fresh52b). `alphas_bar_sqrt = alphas_bar.sqrt()` (sqrt saves its output), then `alphas_bar_sqrt -=
alphas_bar_sqrt_T` (:47) and `alphas_bar_sqrt *= ...` (:49) write it. The function is compiled alone from the
shipped file. Betas requiring grad (a learned schedule) raise: real by this file's convention; the DDPM/DDIM
schedulers call it on a fixed schedule built with torch.linspace/cosine, without grad (context). :47 is run with
:49 out of place, and :49 with :47 skipped (rewriting :47 out of place would rebind the name to a fresh
difference that nothing saves)."""

import _shim  # noqa: F401
import linecache

import numpy as np
import torch
from _check import attempt
from _fresh52b import compile_alone, src

SRC = src("terratorch/models/backbones/terramind/tokenizer/scheduling/scheduling_utils.py")
assert linecache.getline(SRC, 47).strip() == "alphas_bar_sqrt -= alphas_bar_sqrt_T"
assert linecache.getline(SRC, 49).strip() == \
    "alphas_bar_sqrt *= alphas_bar_sqrt_0 / (alphas_bar_sqrt_0 - alphas_bar_sqrt_T)"
OUT47 = "alphas_bar_sqrt = alphas_bar_sqrt - alphas_bar_sqrt_T"
OUT49 = "alphas_bar_sqrt = alphas_bar_sqrt * (alphas_bar_sqrt_0 / (alphas_bar_sqrt_0 - alphas_bar_sqrt_T))"


def run(replace, grad=True):
    def go():
        ns = compile_alone(SRC, {"enforce_zero_terminal_snr"}, {"torch": torch, "np": np}, replace=replace)
        betas = torch.linspace(1e-4, 0.02, 10, requires_grad=grad)
        out = ns["enforce_zero_terminal_snr"](betas)
        if grad:
            out.sum().backward()
    return go


F47 = "terratorch/models/backbones/terramind/tokenizer/scheduling/scheduling_utils.py:47:IPF101"
F49 = "terratorch/models/backbones/terramind/tokenizer/scheduling/scheduling_utils.py:49:IPF101"
attempt(F47, "path", "betas requiring grad, :49 out of place, backward", run({49: OUT49}))
attempt(F47, "control", ":47 and :49 out of place", run({47: OUT47, 49: OUT49}))
attempt(F49, "path", "betas requiring grad, :47 skipped, :49 as shipped, backward", run({47: "pass"}))
attempt(F49, "control", ":47 skipped, :49 out of place", run({47: "pass", 49: OUT49}))
attempt(F47, "context", "a fixed schedule without grad (the DDPM/DDIM schedulers), as shipped: runs", run({}, False))
