"""stanza 1.15.0: the one proven finding of `inplacefix check` on main e3574f0 (stop 49, prec49):
`Seq2SeqModel.decode` (models/common/seq2seq_model.py) writes `log_probs[:, :, UNK_ID] =
float("-inf")` (line 210) when `never_decode_unk`; `log_probs` is `get_log_prob`'s `log_softmax`
output (line 252, saved for backward) or, with the copy gate, `torch.logsumexp(...)` (line 207, which
saves its result). stanza's package imports need udtools and more (not installed here), so the
driver compiles `decode` and `get_log_prob` alone from the installed file (ast, line numbers kept)
with real torch modules standing for the decoder (an LSTM), `dec2vocab` and `copy_gate`. The path:
decode(..., never_decode_unk=True) with the decoder's parameters requiring grad, backward through
the finite log-probabilities: raises (both arms: copy off and on); the control the same with
never_decode_unk=False (the write skipped) runs. Context: stanza passes never_decode_unk=True only
from inference (the MWT processor through `Trainer.predict`, model in eval; beam search's later steps
under no_grad). Real by this file's convention (parameters requiring grad raise); the library's own use
is inference."""

import _shim  # noqa: F401
import ast
import importlib.util
import os
import types

import torch
import torch.nn.functional as F
from _check import attempt, expect_line
from torch import nn

PATH = os.path.join(os.path.dirname(importlib.util.find_spec("stanza").origin), "models", "common", "seq2seq_model.py")
UNK_ID = 1  # stanza.models.common.seq2seq_constant.UNK_ID
NS = {"torch": torch, "F": F, "UNK_ID": UNK_ID}
_body = next(n for n in ast.parse(open(PATH).read(), PATH).body
             if isinstance(n, ast.ClassDef) and n.name == "Seq2SeqModel").body
for _name in ("decode", "get_log_prob"):
    _fn = next(n for n in _body if isinstance(n, ast.FunctionDef) and n.name == _name)
    exec(compile(ast.Module(body=[_fn], type_ignores=[]), PATH, "exec"), NS)
decode, get_log_prob = NS["decode"], NS["get_log_prob"]
expect_line(decode, 210, 'log_probs[:, :, UNK_ID] = float("-inf")')
expect_line(get_log_prob, 252, "log_probs = F.log_softmax(logits_reshape, dim=1)")
FINDING = "stanza/models/common/seq2seq_model.py:210:IPF104"
VOCAB, H, S = 10, 6, 5


def model(copy):
    torch.manual_seed(0)
    lstm = nn.LSTM(4, H, batch_first=True)

    def decoder(dec_inputs, dec_hidden, ctx, ctx_mask, return_logattn=False):
        h_out, (hn, cn) = lstm(dec_inputs, tuple(t.unsqueeze(0) for t in dec_hidden))
        log_attn = torch.log_softmax(h_out @ ctx.transpose(1, 2), -1)  # B x T x S
        return (h_out, (hn[0], cn[0]), log_attn) if return_logattn else (h_out, (hn[0], cn[0]))

    self = types.SimpleNamespace(decoder=decoder, dec2vocab=nn.Linear(H, VOCAB), copy=copy,
                                 copy_gate=nn.Linear(H, 1), use_pos=False, vocab_size=VOCAB)
    self.get_log_prob = lambda logits: get_log_prob(self, logits)
    return self


def run_decode(copy, never_decode_unk=True):
    def run():
        self = model(copy)
        B, T = 2, 3
        hn, cn, ctx = torch.zeros(B, H), torch.zeros(B, H), torch.randn(B, S, H)
        src = torch.randint(2, VOCAB, (B, S))
        log_probs, _ = decode(self, torch.randn(B, T, 4), hn, cn, ctx, src=src, never_decode_unk=never_decode_unk)
        assert torch.isinf(log_probs[:, :, UNK_ID]).all() == never_decode_unk
        log_probs.masked_fill(torch.isinf(log_probs), 0).sum().backward()
    return run


attempt(FINDING, "path", "decode(never_decode_unk=True), copy off (log_softmax's output), parameters requiring "
        "grad, backward", run_decode(False))
attempt(FINDING, "path", "the same with the copy gate on (logsumexp's output)", run_decode(True))
attempt(FINDING, "control", "copy off, never_decode_unk=False (the write skipped)", run_decode(False, False))
attempt(FINDING, "control", "copy on, never_decode_unk=False", run_decode(True, False))
