"""funasr 1.4.16: the fourteen proven findings of `inplacefix check` on main d1b4fd6 (stop 51, label51c). funasr's
modules import here (with /work/tmp/prec50b/deps on the path); each module is exec'd from its shipped file (for
controls, with one statement replaced) into a fresh namespace (`load`); classes are built with their own __init__
at small sizes and run in training with parameters requiring grad.
- The CIF/PIF predictors' `alphas *= (target_length / token_num)...` (paraformer/cif_predictor.py:99 CifPredictor,
  :298 CifPredictorV2; bicif_paraformer/cif_predictor.py:291 CifPredictorV3; e_paraformer/pif_predictor.py:113,
  and :117 `alphas *= (token_num_int / token_num)[:, None]` without targets), all "output of relu": with a mask,
  `alphas = alphas * mask` rebinds alphas to a fresh product before the write; without one, `mask.squeeze(-1)`
  fails (AttributeError on None) before it. Path (mask given): backward runs. Context: mask None raises
  AttributeError first. Control: the `alphas = alphas * mask` statement replaced by `pass`: raises (ReLU's
  output modified). False: none-deref-before-write (prec51c_probes.py `cif_probe`).
- bicif_paraformer/cif_predictor.py:345, `get_upsample_timestamp(hidden, mask=None, token_num)` (mask defaults to
  None and the function never dereferences it on the "cnn" upsampling arm): alphas2 is relu's output when no mask
  is given, `alphas2 *= (token_num / _token_num)...` raises; control out of place runs. Real by this file's
  convention (funasr's models call it for timestamps; bicif_paraformer/model.py:188 passes a mask).
- paraformer/cif_predictor.py:344/:346, `CifPredictorV2.forward_chunk` (streaming): `alphas[:, :chunk] = 0.0`
  and `alphas[:, sum(chunk[:2]):] = 0.0` write relu's output (a squeezed view). Path: hidden requiring grad,
  cache with chunk_size, stopped after the writes (line 347 a return), backward from alphas: raises; 344 isolated by
  is_final=True, 346 with 344 skipped; controls out of place run. Aside: run whole, the integrate-and-fire loop
  raises on its own (`frames = integrate * hidden[b][t]` saves integrate, then `integrate += alpha`), a hazard the
  check does not report (a `context` scenario). Streaming inference runs without grad: real by this file's convention.
- data2vec/multihead_attention.py:39, `FairseqDropout.forward`: `F.dropout(x, ..., inplace=inplace)`, reported
  for the call `self.dropout_module(attn_weights)` (line 526) on softmax's output. `inplace` defaults to False and
  that call does not pass it: the dropout is out of place. MultiheadAttention(16, 2, dropout=0.5,
  self_attention=True) in training, query requiring grad, backward runs; control with line 526 as
  `self.dropout_module(attn_weights, inplace=True)` raises. False: default-false-flag (prec51c_probes.py `Drop`).
- specaug/profileaug.py:97/:98 (merge_aug) and :137 (disturb_aug): `profile[idx, spk] = F.normalize(profile[idx,
  spk])` and `profile[idx, spk_2] = 0`, "profile saved by normalize". The speaker index is a one-element index
  tensor (a row of torch.nonzero), so `profile[idx, spk]` is an advanced-index copy: normalize saves the copy,
  not profile. (linalg.norm at line 85/122 saves profile, but its result only feeds torch.nonzero: its backward
  never runs.) Path: profile a non-leaf requiring grad, probability 1, backward from the returned profile: runs.
  Control: the index made a Python int (`int(spk)`, a basic index, a view): raises. False: tensor-index-copy
  (prec51c_probes.py `merge_probe`; the cousin of prec51b's where-tuple-index).
- transformer/scorers/ctc_prefix_score.py:169/:172, `CTCPrefixScoreTH.__call__` without scoring_ids:
  `log_psi` is logsumexp's output (saved), then `log_psi[si, self.eos] = ...` and `log_psi[:, self.blank] = ...`.
  Path: CTC log-posteriors requiring grad (full lengths), one step, backward from the scores: raises; 169 isolated
  with 172 out of place, 172 with 169 skipped; controls out of place run. Beam search runs without grad: real by this file's convention."""

import _shim  # noqa: F401
import ast
import linecache
import os
import sys
import types

import numpy as np
import torch
from _check import attempt
from _prec51b import PK2, _replace

if "six" not in sys.modules:  # ctc_prefix_score.py imports six (not installed here); CTCPrefixScoreTH does not use it
    sys.modules["six"] = types.SimpleNamespace(moves=types.SimpleNamespace(range=range))

M = os.path.join(PK2, "funasr/models")
PARA = os.path.join(M, "paraformer/cif_predictor.py")
BICIF = os.path.join(M, "bicif_paraformer/cif_predictor.py")
PIF = os.path.join(M, "e_paraformer/pif_predictor.py")
MHA = os.path.join(M, "data2vec/multihead_attention.py")
AUG = os.path.join(M, "specaug/profileaug.py")
CTC = os.path.join(M, "transformer/scorers/ctc_prefix_score.py")


def load(path, replace=None):
    """The module at `path` exec'd from its text (statements at {line: code} replaced) into a fresh namespace;
    top-level decorators dropped (funasr's registry and torch.jit.script read the file, not this tree)."""
    tree = ast.parse(open(path).read(), path)
    for node in tree.body:
        if hasattr(node, "decorator_list"):
            node.decorator_list = []
    for line, code in (replace or {}).items():
        _replace(tree, line, code)
    ns = {"__name__": "_funasr_check_" + os.path.basename(path)[:-3]}
    exec(compile(tree, path, "exec"), ns)
    return ns


def line_of(path, text, before):
    """The last line before `before` whose text is `text`."""
    return max(n for n in range(1, before) if linecache.getline(path, n).strip() == text)


# ---- CIF/PIF predictors: alphas rebound by the mask, or mask.squeeze fails
CIF = [(PARA, "CifPredictor", 99, True), (PARA, "CifPredictorV2", 298, True), (BICIF, "CifPredictorV3", 291, True),
       (PIF, "PifPredictor", 113, True), (PIF, "PifPredictor", 117, False)]


def cif_run(path, cls, with_target, mask_given, replace=None):
    def go():
        torch.manual_seed(0)
        np.random.seed(0)
        p = load(path, replace)[cls](8, 1, 1)
        p.train()
        hidden = torch.randn(2, 6, 8, requires_grad=True) * 1.0
        mask = torch.ones(2, 1, 6)
        mask[1, :, 4:] = 0
        target = torch.tensor([[3, 4, 5], [3, 4, -1]]) if with_target else None
        out = p(hidden, target, mask if mask_given else None)
        sum(t.float().sum() for t in out[:3] if isinstance(t, torch.Tensor)).backward()
    return go


# PifPredictor without targets stops with a TypeError at line 120 when grad is on (torch.arange of a 0-dim
# tensor requiring grad, `max_token_num = torch.max(token_num.round())`), after the write at 117: its path and
# control stop right after the write (line 118 replaced by a return).
STOP117 = {118: "return None, token_num, alphas, None"}
assert linecache.getline(PIF, 118).strip() == "max_token_num = torch.max(token_num_int)"
for path, cls, line, with_target in CIF:
    assert linecache.getline(path, line).strip().startswith("alphas *=")
    rebind = line_of(path, "alphas = alphas * mask", line)
    rel = os.path.relpath(path, PK2)
    f = f"{rel}:{line}:IPF101"
    what = "targets" if with_target else "no targets"
    stop = {} if with_target else STOP117
    if not with_target:
        attempt(f, "context", f"{cls}, no targets, mask given, as shipped: TypeError at line 120 (after the write)",
                cif_run(path, cls, with_target, True), expected=(TypeError,))
    attempt(f, "path", f"{cls} in training, {what}, mask given, hidden requiring grad"
            + ("" if with_target else ", stopped after the write"), cif_run(path, cls, with_target, True, stop))
    attempt(f, "context", f"{cls}, no mask: `mask.squeeze(-1)` fails first", cif_run(path, cls, with_target, False),
            expected=(AttributeError,))
    attempt(f, "control", f"line {rebind} (`alphas = alphas * mask`) as `pass`",
            cif_run(path, cls, with_target, True, {rebind: "pass", **stop}))


# ---- bicif get_upsample_timestamp without a mask
assert linecache.getline(BICIF, 345).strip() == "alphas2 *= (token_num / _token_num)[:, None].repeat(1, alphas2.size(1))"


def upsample_run(mask_given, replace=None):
    def go():
        torch.manual_seed(0)
        p = load(BICIF, replace)["CifPredictorV3"](8, 1, 1)
        p.train()
        hidden = torch.randn(2, 6, 8, requires_grad=True) * 1.0
        mask = torch.ones(2, 1, 6)
        token_num = p(hidden, None, mask)[1]
        out = p.get_upsample_timestamp(hidden, mask if mask_given else None, token_num)
        (out[0].sum() + out[2].sum()).backward()
    return go


F345 = "funasr/models/bicif_paraformer/cif_predictor.py:345:IPF101"
attempt(F345, "path", "get_upsample_timestamp(hidden, mask=None, token_num requiring grad)", upsample_run(False))
attempt(F345, "control", "line 345 out of place",
        upsample_run(False, {345: "alphas2 = alphas2 * (token_num / _token_num)[:, None].repeat(1, alphas2.size(1))"}))
attempt(F345, "context", "with a mask (alphas2 rebound by `alphas2 * mask2`)", upsample_run(True))


# ---- CifPredictorV2.forward_chunk
assert linecache.getline(PARA, 344).strip() == 'alphas[:, : cache["chunk_size"][0]] = 0.0'
assert linecache.getline(PARA, 346).strip() == 'alphas[:, sum(cache["chunk_size"][:2]) :] = 0.0'
OUT344 = ('alphas = alphas * (torch.arange(alphas.shape[1]) >= cache["chunk_size"][0]).float()')
OUT346 = ('alphas = alphas * (torch.arange(alphas.shape[1]) < sum(cache["chunk_size"][:2])).float()')


def chunk_run(is_final, replace=None):
    def go():
        torch.manual_seed(0)
        p = load(PARA, replace)["CifPredictorV2"](8, 1, 1, threshold=0.5)
        p.train()
        hidden = torch.randn(1, 10, 8, requires_grad=True) * 1.0
        cache = {"chunk_size": [2, 5, 3]}
        out = p.forward_chunk(hidden, cache, is_final=is_final)
        loss = out[0].sum() + (cache["cif_hidden"].sum() if "cif_hidden" in cache else 0)
        loss.backward()
    return go


F344, F346 = "funasr/models/paraformer/cif_predictor.py:344:IPF104", "funasr/models/paraformer/cif_predictor.py:346:IPF104"
STOP = {347: "return alphas, None, None, None"}
assert linecache.getline(PARA, 347).strip().startswith('if cache is not None and "cif_alphas" in cache')
attempt(F344, "path", "forward_chunk, is_final=True (346 skipped), hidden requiring grad, stopped after the writes",
        chunk_run(True, STOP))
attempt(F344, "control", "line 344 out of place (a mask product)", chunk_run(True, {344: OUT344, **STOP}))
attempt(F346, "path", "forward_chunk, is_final=False, line 344 skipped (`pass`), stopped after the writes",
        chunk_run(False, {344: "pass", **STOP}))
attempt(F346, "control", "line 344 skipped, 346 out of place", chunk_run(False, {344: "pass", 346: OUT346, **STOP}))
attempt(F346, "context", "lines 344 and 346 out of place, not stopped: the integrate-and-fire loop raises on its own "
        "(not reported by the check)", chunk_run(False, {344: OUT344, 346: OUT346}))


# ---- data2vec dropout, inplace defaults to False
assert linecache.getline(MHA, 39).strip() == "return F.dropout(x, p=self.p, training=True, inplace=inplace)"
assert linecache.getline(MHA, 526).strip() == "attn_probs = self.dropout_module(attn_weights)"


def mha_run(replace=None):
    def go():
        torch.manual_seed(0)
        m = load(MHA, replace)["MultiheadAttention"](16, 2, dropout=0.5, self_attention=True)
        m.train()
        m.skip_embed_dim_check = True  # else forward hands everything to F.multi_head_attention_forward (line 334)
        q = torch.randn(5, 2, 16, requires_grad=True) * 1.0
        out, _ = m(q, q, q)
        out.sum().backward()
    return go


F39 = "funasr/models/data2vec/multihead_attention.py:39:IPF102"
attempt(F39, "path", "MultiheadAttention(dropout=0.5) in training, query requiring grad", mha_run())
attempt(F39, "control", "line 526 with inplace=True", mha_run({526: "attn_probs = self.dropout_module(attn_weights, inplace=True)"}))


# ---- profileaug: the speaker index is a one-element tensor (advanced index: a copy)
assert linecache.getline(AUG, 97).strip() == "profile[idx, spk_idx_1] = F.normalize(profile[idx, spk_idx_1], dim=-1)"
assert linecache.getline(AUG, 98).strip() == "profile[idx, spk_idx_2] = 0"
assert linecache.getline(AUG, 137).strip() == "profile[idx, to_disturb_idx] = F.normalize(profile[idx, to_disturb_idx], dim=-1)"
INT_MERGE = "spk_idx_1, spk_idx_2 = int(valid_spk_idx[to_merge[0]]), int(valid_spk_idx[to_merge[1]])"
INT_DISTURB = "to_disturb_idx = int(pos_spk_idx[torch.randint(len(pos_spk_idx), ())])"


def aug_run(method, replace=None):
    def go():
        torch.manual_seed(0)
        np.random.seed(0)
        a = load(AUG, replace)["ProfileAug"](merge_aug_prob=1.0, disturb_aug_prob=1.0)
        profile = torch.randn(2, 4, 8, requires_grad=True) * 1.0
        labels = torch.ones(2, 10, 4)
        mask = torch.ones(2, 4)
        out = getattr(a, method)(profile, labels, mask)
        out[0].sum().backward()
    return go


for line in (97, 98):
    f = f"funasr/models/specaug/profileaug.py:{line}:IPF104"
    attempt(f, "path", "merge_aug(profile requiring grad), prob 1, backward", aug_run("merge_aug"))
    attempt(f, "control", "speaker indices as Python ints (basic index: a view)",
            aug_run("merge_aug", {line_of(AUG, "spk_idx_1, spk_idx_2 = valid_spk_idx[to_merge[0]], valid_spk_idx[to_merge[1]]", 97): INT_MERGE}))
F137 = "funasr/models/specaug/profileaug.py:137:IPF104"
attempt(F137, "path", "disturb_aug(profile requiring grad), prob 1, backward", aug_run("disturb_aug"))
attempt(F137, "control", "the index as a Python int",
        aug_run("disturb_aug", {line_of(AUG, "to_disturb_idx = pos_spk_idx[torch.randint(len(pos_spk_idx), ())]", 137): INT_DISTURB}))


# ---- CTC prefix scorer
assert linecache.getline(CTC, 169).strip() == "log_psi[si, self.eos] = r_sum[self.end_frames[si // n_hyps], si]"
assert linecache.getline(CTC, 172).strip() == "log_psi[:, self.blank] = self.logzero"
OUT169 = ("log_psi = torch.cat((log_psi[:si], torch.cat((log_psi[si, :self.eos], r_sum[self.end_frames[si // n_hyps], si]"
          "[None], log_psi[si, self.eos + 1:]))[None], log_psi[si + 1:]))")
OUT172 = "log_psi = log_psi.index_fill(1, torch.tensor([self.blank]), self.logzero)"


def ctc_run(replace=None):
    def go():
        torch.manual_seed(0)
        # full lengths: __init__ pads shorter rows in place (x[i, l:, :] = logzero), which would write a
        # log_softmax output of the set-up; the product keeps the stand-in posteriors free of saved outputs
        x = torch.randn(2, 6, 5, requires_grad=True) * 1.0
        s = load(CTC, replace)["CTCPrefixScoreTH"](x, torch.tensor([6, 6]), 0, 4)
        scores, _ = s([[1], [1]], None)
        scores.masked_fill(scores < -1e9, 0).sum().backward()
    return go


F169, F172 = ("funasr/models/transformer/scorers/ctc_prefix_score.py:%d:IPF104" % n for n in (169, 172))
attempt(F169, "path", "CTCPrefixScoreTH, log-posteriors requiring grad, line 172 out of place", ctc_run({172: OUT172}))
attempt(F169, "control", "lines 169 and 172 out of place", ctc_run({169: OUT169, 172: OUT172}))
attempt(F172, "path", "line 169 skipped (`pass`)", ctc_run({169: "pass"}))
attempt(F172, "control", "line 169 skipped, 172 out of place", ctc_run({169: "pass", 172: OUT172}))
attempt(F172, "path", "as shipped", ctc_run())
