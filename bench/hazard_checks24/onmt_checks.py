"""opennmt-py 3.5.1 (`onmt`, utils/loss.py): the two proven findings of `inplacefix check` on main d1b4fd6 (stop
51, label51c): `lm_scores[:, self.vocab[DefaultTokens.UNK]] = -50` after `lm_scores = F.log_softmax(lm_scores...)`
in `LossCompute._compute_lm_loss_ct2` (line 218, log_softmax at 217) and `_compute_lm_loss` (249, at 248).
In both the log_softmax's input cannot require grad: in ct2 it is `torch.as_tensor` of a CTranslate2 result (a
numpy-backed array), in the other `self.lm_prior_model.generator(...).detach().clone() / tau`. No LogSoftmax node
is recorded, so nothing is saved. onmt's package import needs more (ctranslate2, pyonmttok...): LossCompute is
compiled alone from the shipped file (DefaultTokens from onmt/constants.py, loaded alone), built by __new__ with the
attributes the two methods read: generator (Linear 6->10), lm_prior_tau 2.0, vocab {"</s>": 3, "<unk>": 0},
padding_idx 1 (criterion NLLLoss(ignore_index=1)); lm_prior_model a Linear-backed module returning (outs, None) with a Linear generator; stand-in
`ctranslate2.StorageView.from_array` and `lm_generator.forward_batch` returning a numpy (B, T, V) array. Path:
decoder output and every parameter requiring grad, backward from the lm loss: runs. Control: the same with the
LM scores requiring grad (`.detach()` dropped from the statement at line 243; for ct2, forward_batch returning a tensor
requiring grad): raises (LogSoftmax's output modified). The only other way a grad could reach the write is
`self.lm_prior_tau`, the divisor: a constructor parameter documented `(float)` and built from `opt.lm_prior_tau`
(from_opts, the one constructor call); a `context` scenario shows that a tau tensor requiring grad (never so in
onmt) would raise. False: init-param-operand, the check reads that attribute as requiring grad (with
`self.lm_prior_tau = 2.0` the finding goes; prec51c_probes.py `LMPrior`)."""

import _shim  # noqa: F401
import linecache
import os
import types

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from _check import attempt
from _prec51b import PK2, compile_alone

SRC = os.path.join(PK2, "onmt/utils/loss.py")
CONST = os.path.join(PK2, "onmt/constants.py")
UNK = "lm_scores[:, self.vocab[DefaultTokens.UNK]] = -50"
assert linecache.getline(SRC, 218).strip() == UNK and linecache.getline(SRC, 249).strip() == UNK
assert linecache.getline(SRC, 214).strip() == "lm_scores = torch.as_tensor(lm_scores, device=scores.device)"
assert linecache.getline(SRC, 244).strip() == "self.lm_prior_model.generator(self._bottle(lm_outs)).detach().clone()"
B, T, H, V = 2, 4, 6, 10


class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb, self.generator = nn.Embedding(V, H), nn.Linear(H, V)

    def forward(self, src, _, src_len, with_align=False):
        return self.emb(src[:, :, 0]), None


def build(ct2_grad, replace):
    ns = {"torch": torch, "nn": nn, "F": F}
    compile_alone(CONST, {"DefaultTokens"}, ns)
    lm = LM()

    def forward_batch(src, src_len, return_log_probs=False):
        if ct2_grad:
            return lm.generator(lm.emb(src)) * 1.0
        return np.random.randn(B, T, V).astype(np.float32)

    ns["ctranslate2"] = types.SimpleNamespace(StorageView=types.SimpleNamespace(from_array=lambda t: t))
    compile_alone(SRC, {"LossCompute"}, ns, replace=replace)
    m = ns["LossCompute"].__new__(ns["LossCompute"])
    nn.Module.__init__(m)
    m.generator, m.lm_prior_tau, m.criterion = nn.Linear(H, V), 2.0, nn.NLLLoss(ignore_index=1)
    m.vocab = {"</s>": 3, "<unk>": 0}
    m.lm_prior_model, m.lm_generator = lm, types.SimpleNamespace(forward_batch=forward_batch)
    return m


def run(method, ct2_grad=False, replace=None, tau_grad=False):
    def go():
        torch.manual_seed(0)
        np.random.seed(0)
        m = build(ct2_grad, replace)
        if tau_grad:
            m.lm_prior_tau = torch.tensor(2.0, requires_grad=True)
        output = torch.randn(B, T, H, requires_grad=True) * 1.0
        target = torch.randint(2, V, (B, T + 1, 1))
        getattr(m, method)(output, target).backward()
    return go


attempt("onmt/utils/loss.py:218:IPF104", "path", "_compute_lm_loss_ct2, output/parameters requiring grad, backward",
        run("_compute_lm_loss_ct2"))
attempt("onmt/utils/loss.py:218:IPF104", "control", "forward_batch returning LM scores that require grad",
        run("_compute_lm_loss_ct2", ct2_grad=True))
attempt("onmt/utils/loss.py:249:IPF104", "path", "_compute_lm_loss, output/parameters requiring grad, backward",
        run("_compute_lm_loss"))
attempt("onmt/utils/loss.py:249:IPF104", "control", "line 243 without `.detach()` (LM scores require grad)",
        run("_compute_lm_loss", replace={243: "lm_scores = (self.lm_prior_model.generator(self._bottle(lm_outs)).clone()"
                                              " / self.lm_prior_tau)"}))
attempt("onmt/utils/loss.py:249:IPF104", "context", "lm_prior_tau a tensor requiring grad (onmt passes a float)",
        run("_compute_lm_loss", tau_grad=True))
