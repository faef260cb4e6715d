"""mmpretrain 1.2.0: the five proven findings of `inplacefix check` on main e3574f0 (stop 49, prec49).
mmpretrain's modules import mmcv, mmengine and transformers at the top (not installed here), so the
driver compiles the flagged code alone from the unpacked wheel (ast, line numbers kept;
MMPRETRAIN_SRC, the folder holding `mmpretrain/`, default /work/tmp/prec49/site3: `pip download
--no-deps mmpretrain==1.2.0`, unzip) with real torch modules standing for the encoders.

- multimodal/chinese_clip/chinese_clip.py:375, 406, 408 (IPF101): `image_features /=
  image_features.norm(dim=-1, keepdim=True)` in `ChineseCLIP.predict`, and `class_features /=
  class_features.norm(...)`, `class_feature /= class_feature.norm()` in `prepare_text_prototype`;
  norm saves its input. The path: `predict(images)` with the image encoder's parameters requiring
  grad, backward through the returned scores: raises at 375; `prepare_text_prototype` with the text
  encoder's parameters requiring grad, backward through `text_prototype_embeds`: raises (406), and
  with line 406 out of place still raises (408 alone); controls out of place run. Context:
  mmengine's val/test loops and mmpretrain's inferencers call `predict` under no_grad (runs); the
  predict scenarios take the text prototypes as already prepared (no grad), as after the first call.
  Real by this file's convention (parameters requiring grad raise); the library's own use runs.
- multimodal/ofa/ofa_modules.py:1133, 1134 (IPF104) in `OFADecoder.forward`:
  `x[~code_masks] = self.embedding_ln(x[~code_masks])` and `x[code_masks] =
  self.code_embedding_ln(x[code_masks])`; the report says LayerNorm (line 1133) saved `x`, but
  it is handed `x[~code_masks]`, a boolean-mask index (a copy): LayerNorm saves the copy, and `x`
  (`embed_tokens(ids) * embedding_scale`, a number, then `+= pos_embedding`) is saved by nothing. The
  path: lines 1121-1134 compiled from the file and run with real Embedding/LayerNorm modules whose
  parameters require grad and a mixed code mask (the `else` arm), backward: runs. Context: line 1133
  with a basic slice `x[:2]` (a view) in place of the mask: raises, so the mask's copy is what keeps
  `x` unsaved.
  False (group inverted-mask-index: `x[~code_masks]` read as a basic index, a view; `~` of a tensor
  is a tensor index, a copy; comparisons are read as masks, `~` is not; cf. audiocraft
  sound_dataset.py:247)."""

import _shim  # noqa: F401
import ast
import os
import types

import torch
import torch.nn.functional as F
from _check import attempt, expect_line
from _rewrite import rewritten
from torch import nn

SRC = os.path.join(os.environ.get("MMPRETRAIN_SRC", "/work/tmp/prec49/site3"), "mmpretrain", "models", "multimodal")


def method(relpath, cls, name, namespace):
    path = os.path.join(SRC, relpath)
    body = next(n for n in ast.parse(open(path).read(), path).body if isinstance(n, ast.ClassDef) and n.name == cls).body
    fn = next(n for n in body if isinstance(n, ast.FunctionDef) and n.name == name)
    exec(compile(ast.Module(body=[fn], type_ignores=[]), path, "exec"), namespace)
    return namespace[name], path, fn


class DataSample:  # mmpretrain.structures.DataSample's two setters used by predict
    def set_pred_score(self, score):
        self.score = score
        return self

    def set_pred_label(self, label):
        self.label = label
        return self


CLIP = "chinese_clip/chinese_clip.py"
ns = {"torch": torch, "F": F, "DataSample": DataSample, "track_on_main_process": lambda items, _: items}
predict = method(CLIP, "ChineseCLIP", "predict", ns)[0]
prepare = method(CLIP, "ChineseCLIP", "prepare_text_prototype", ns)[0]
expect_line(predict, 375, "image_features /= image_features.norm(dim=-1, keepdim=True)")
expect_line(prepare, 406, "class_features /= class_features.norm(dim=-1, keepdim=True)")
expect_line(prepare, 408, "class_feature /= class_feature.norm()")
F375, F406, F408 = ("mmpretrain/models/multimodal/%s:%d:IPF101" % (CLIP, n) for n in (375, 406, 408))


def clip_model():
    torch.manual_seed(0)
    image_encoder, text_encoder = nn.Linear(12, 8), nn.EmbeddingBag(20, 8)
    model = types.SimpleNamespace(
        text_prototype_embeds=None, logit_scale=nn.Parameter(torch.tensor(2.0)),
        prototype=["cat", "dog", "fish"], prompt=[lambda c: c, lambda c: c + "!"],
        tokenize=lambda texts: torch.tensor([[len(t) % 20, (3 * len(t)) % 20] for t in texts]),
        extract_image_feat=lambda images: image_encoder(images), extract_text_feat=lambda ids: text_encoder(ids))
    model.prepare_text_prototype = lambda device: (edited["prepare"] or prepare)(model, device)
    return model


edited = {"prepare": None}


def clip_predict(edits=(), grad=True):
    def run():
        model = clip_model()
        model.text_prototype_embeds = torch.nn.functional.normalize(torch.randn(8, 3), dim=0)  # prepared once
        f = rewritten(predict, edits) if edits else predict
        with torch.set_grad_enabled(grad):
            samples = f(model, torch.randn(4, 12))
            scores = torch.stack([s.score for s in samples])
        if grad:
            (scores * torch.arange(3.0)).sum().backward()
    return run


def clip_prepare(edits=()):
    def run():
        model = clip_model()
        edited["prepare"] = rewritten(prepare, edits) if edits else None
        try:
            model.prepare_text_prototype(device="cpu")
        finally:
            edited["prepare"] = None
        (model.text_prototype_embeds * torch.arange(3.0)).sum().backward()
    return run


OUT375 = ("image_features /= image_features.norm(dim=-1, keepdim=True)",
          "image_features = image_features / image_features.norm(dim=-1, keepdim=True)")
OUT406 = ("class_features /= class_features.norm(dim=-1, keepdim=True)",
          "class_features = class_features / class_features.norm(dim=-1, keepdim=True)")
OUT408 = ("class_feature /= class_feature.norm()", "class_feature = class_feature / class_feature.norm()")
attempt(F375, "path", "ChineseCLIP.predict(images), image encoder requiring grad, backward through the scores",
        clip_predict())
attempt(F375, "control", "line 375 out of place", clip_predict([OUT375]))
attempt(F375, "context", "predict under no_grad (mmengine's test loop, the inferencers)", clip_predict(grad=False))
attempt(F406, "path", "prepare_text_prototype, text encoder requiring grad, backward through the prototypes",
        clip_prepare())
attempt(F408, "path", "the same with line 406 out of place (line 408 alone)", clip_prepare([OUT406]))
for finding in (F406, F408):
    attempt(finding, "control", "lines 406 and 408 out of place", clip_prepare([OUT406, OUT408]))

# OFA ---------------------------------------------------------------------------------------------
OFA = "ofa/ofa_modules.py"
forward, ofa_path, fn = method(OFA, "OFADecoder", "forward", {"torch": torch, **{
    k: getattr(__import__("typing"), k) for k in ("Optional", "List", "Tuple", "Dict", "Any")}})
expect_line(forward, 1121, "x = self.embed_tokens(input_ids) * self.embedding_scale")
expect_line(forward, 1133, "x[~code_masks] = self.embedding_ln(x[~code_masks])")
expect_line(forward, 1134, "x[code_masks] = self.code_embedding_ln(x[code_masks])")
F1133, F1134 = ("mmpretrain/models/multimodal/%s:%d:IPF104" % (OFA, n) for n in (1133, 1134))
block = [s for s in fn.body if 1121 <= s.lineno <= 1134]  # x = embed ...; if entangle: x += ...; if embedding_ln ...
assert block[0].lineno == 1121 and block[-1].end_lineno >= 1134, [s.lineno for s in block]
embed_block = compile(ast.Module(body=block, type_ignores=[]), ofa_path, "exec")
lines = open(ofa_path).read().splitlines(True)
sliced = "".join(lines[1120:block[-1].end_lineno]).replace(
    "x[~code_masks] = self.embedding_ln(x[~code_masks])", "x[:2] = self.embedding_ln(x[:2])")
assert "x[:2]" in sliced
sliced_block = compile("if True:\n" + sliced, ofa_path, "exec")  # the block is indented one level


def ofa(code=embed_block):
    def run():
        torch.manual_seed(0)
        self = types.SimpleNamespace(embed_tokens=nn.Embedding(30, 8), embedding_scale=8 ** 0.5,
                                     entangle_position_embedding=True, embedding_ln=nn.LayerNorm(8),
                                     code_embedding_ln=nn.LayerNorm(8))
        scope = {"self": self, "input_ids": torch.randint(0, 30, (4, 5)),
                 "pos_embedding": torch.randn(4, 5, 8, requires_grad=True),
                 "code_masks": torch.tensor([True, False, True, False])}  # mixed: the else arm
        seen = []
        for ln in (self.embedding_ln, self.code_embedding_ln):
            ln.register_forward_hook(lambda m, i, o: seen.append(m))
        exec(code, {"torch": torch}, scope)
        assert len(seen) == 2, "the else arm (lines 1133-1134) did not run"
        scope["x"].pow(2).sum().backward()
        assert self.embedding_ln.weight.grad is not None and self.code_embedding_ln.weight.grad is not None
    return run


for finding in (F1133, F1134):
    attempt(finding, "path", "lines 1121-1134 of OFADecoder.forward, Embedding/LayerNorm parameters and pos "
            "embedding requiring grad, code_masks mixed (else arm), backward", ofa())
    attempt(finding, "context", "line 1133 with a basic slice, x[:2] = self.embedding_ln(x[:2]) (a view, "
            "which LayerNorm saves): raises", ofa(sliced_block))
