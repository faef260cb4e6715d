"""ultralytics 8.4.190: the proven finding of `inplacefix check` (main at ec70a2c, stop 36):
`MobileCLIP.encode_text` (`ultralytics/nn/text_model.py:251`,
`text_features /= text_features.norm(p=2, dim=-1, keepdim=True)`: norm saves its input). The
method is decorated with `@smart_inference_mode()` (ultralytics/utils/torch_utils.py), which wraps
it in `torch.inference_mode()`: the path runs it as the library defines it, with a text encoder
whose parameters require grad, and backward where the result requires grad (it does not: the
write runs with grad off); the context runs the undecorated body (`__wrapped__`), which raises.

The package imports need cv2 and matplotlib (not installed for this torch); the functions checked
use only torch and functools, so they are run from the installed files' own source
(`functions_from`: names and line numbers kept). `smart_inference_mode` reads TORCH_1_9 and
TORCH_1_10 (`check_version` of torch against 1.9/1.10: true for torch 2.x, set so here)."""

import builtins
import importlib.util

import _shim  # noqa: F401
import torch
from _check import attempt, expect_line
from _rewrite import functions_from

ROOT = str(importlib.util.find_spec("ultralytics").submodule_search_locations[0])
UTILS = functions_from(ROOT + "/utils/torch_utils.py", ["smart_inference_mode"])
UTILS["TORCH_1_9"] = UTILS["TORCH_1_10"] = True
# the decorator is evaluated when the method is defined: give it the name text_model.py imports
builtins.smart_inference_mode = UTILS["smart_inference_mode"]
try:
    LIB = functions_from(ROOT + "/nn/text_model.py", ["MobileCLIP.encode_text"])
finally:
    del builtins.smart_inference_mode
ENCODE_TEXT = LIB["MobileCLIP.encode_text"]
FINDING = "ultralytics/nn/text_model.py:251:IPF101"
expect_line(ENCODE_TEXT.__wrapped__, 251, "text_features /= text_features.norm(p=2, dim=-1, keepdim=True)")


class _Encoder(torch.nn.Module):
    """Stands in for MobileCLIP's text tower: parameters that require grad."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(6, 8)

    def encode_text(self, texts):
        return self.proj(texts)


class _Model:
    def __init__(self):
        torch.manual_seed(0)
        self.model = _Encoder()


def encode(function):
    def run():
        texts = torch.randn(2, 6)
        out = function(_Model(), texts)
        if out.requires_grad:
            out.sum().backward()
    return run


attempt(FINDING, "path", "encode_text as defined (@smart_inference_mode()), encoder parameters requiring grad, "
        "backward where the result requires grad", encode(ENCODE_TEXT))
attempt(FINDING, "context", "the undecorated body (__wrapped__) with grad on, backward", encode(ENCODE_TEXT.__wrapped__))
