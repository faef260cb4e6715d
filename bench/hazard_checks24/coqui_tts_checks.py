"""coqui-tts 0.28.0 (package `TTS`): the one proven finding of `inplacefix check` on main e0a91e4 (stop 50,
prec50b): `TransformerEncoder.extract_features` (vc/layers/freevc/wavlm/wavlm.py) runs
`x_conv = self.pos_conv(x.transpose(1, 2))` (line 548: a weight-normed Conv1d, SamePad, GELU; the Conv1d saves
its input, a view of `x`) then `x += x_conv` (line 550). TTS's package `__init__` needs the `trainer` package and
coqui-tts's metadata (not installed here), so the driver loads `wavlm.py` and `modules.py` as they are, with
empty parent packages standing in (nothing of the files replaced). Sources: the unpacked wheel under
$PREC50B_SITE (default /work/tmp/prec50b/pk). The path: a small WavLM (the library's class and config) with its
parameters requiring grad (training or fine-tuning it), `extract_features(wav)`, backward: raises. Control: the
same with `x += x_conv` replaced by `x = x + x_conv` (the function recompiled from the edited source).
Context: coqui-tts runs WavLM frozen (`get_wavlm()` puts it in eval; FreeVC calls it under no_grad, kNN-VC at
inference): real by this file's convention (parameters requiring grad raise); the library's own use keeps
grad off."""

import _shim  # noqa: F401
import ast
import importlib
import os
import sys
import types

import torch
from _check import attempt, expect_line

SITE = os.environ.get("PREC50B_SITE", "/work/tmp/prec50b/pk")
PKG = os.path.join(SITE, "TTS", "vc", "layers", "freevc", "wavlm")
for name, path in (("TTS", "TTS"), ("TTS.vc", "TTS/vc"), ("TTS.vc.layers", "TTS/vc/layers"),
                   ("TTS.vc.layers.freevc", "TTS/vc/layers/freevc"),
                   ("TTS.vc.layers.freevc.wavlm", "TTS/vc/layers/freevc/wavlm")):
    mod = types.ModuleType(name)
    mod.__path__ = [os.path.join(SITE, path)]
    sys.modules[name] = mod
wavlm = importlib.import_module("TTS.vc.layers.freevc.wavlm.wavlm")
expect_line(wavlm.TransformerEncoder.extract_features, 548, "x_conv = self.pos_conv(x.transpose(1, 2))")
expect_line(wavlm.TransformerEncoder.extract_features, 550, "x += x_conv")
FINDING = "TTS/vc/layers/freevc/wavlm/wavlm.py:550:IPF101"


def small_config():
    cfg = wavlm.WavLMConfig()
    cfg.encoder_layers, cfg.encoder_embed_dim, cfg.encoder_ffn_embed_dim = 2, 32, 64
    cfg.encoder_attention_heads, cfg.conv_pos, cfg.conv_pos_groups = 4, 8, 4
    cfg.conv_feature_layers = "[(16,10,5)] + [(16,3,2)] * 2"
    return cfg


def out_of_place_extract_features():
    """TransformerEncoder.extract_features with line 550 written `x = x + x_conv` (the rest as shipped)."""
    path = wavlm.__file__
    cls = next(n for n in ast.parse(open(path).read(), path).body
               if isinstance(n, ast.ClassDef) and n.name == "TransformerEncoder")
    fn = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "extract_features")
    for node in ast.walk(fn):
        if isinstance(node, ast.AugAssign) and node.lineno == 550:
            edited = ast.Assign(targets=[ast.Name("x", ast.Store())],
                                value=ast.BinOp(ast.Name("x", ast.Load()), ast.Add(), node.value))
            ast.copy_location(edited, node)
            ast.fix_missing_locations(edited)
            parent = next(p for p in ast.walk(fn) for f in ("body", "orelse")
                          if node in getattr(p, f, []))
            body = parent.body if node in parent.body else parent.orelse
            body[body.index(node)] = edited
    ns = dict(vars(wavlm))
    exec(compile(ast.Module(body=[fn], type_ignores=[]), path, "exec"), ns)
    return ns["extract_features"]


def run(out_of_place=False):
    def go():
        torch.manual_seed(0)
        model = wavlm.WavLM(small_config())
        model.train()
        if out_of_place:
            model.encoder.extract_features = types.MethodType(out_of_place_extract_features(), model.encoder)
        wav = torch.randn(2, 1600)
        feats = model.extract_features(wav)[0]
        feats.pow(2).mean().backward()
    return go


attempt(FINDING, "path", "WavLM (small config) in training, parameters requiring grad, extract_features(wav), "
        "backward", run())
attempt(FINDING, "control", "the same with line 550 as `x = x + x_conv`", run(out_of_place=True))
