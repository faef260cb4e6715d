"""espnet 202511: the four proven findings of `inplacefix check` on main 07e1e7b (stop 48, prec48).

- `CTCPrefixScoreTH.__call__` (nets/ctc_prefix_score.py:185 and :189) writes `log_psi[si, self.eos] = ...`
  and `log_psi[:, self.blank] = self.logzero` into `log_psi = torch.logsumexp(...)` (line 179;
  logsumexp saves its result). The path builds the scorer on log-probabilities computed from a
  leaf requiring grad (no padding: every length is T), scores one prefix, and runs backward on the
  scores. :185 alone: eos == blank (line 189 skipped); :189: eos != blank with line 185 written
  through `.data` (same values, no version bump: isolates the later write). Controls: the line(s)
  written through `.data`. The library runs the scorer in beam search under no_grad: context.
- `_apply_dynamic_filter` (nets/pytorch_backend/rnn/attentions.py:1824 and :1826) writes
  `p[:, :backward_idx] = 0` / `p[:, forward_idx:] = 0` into `att_prev`, which
  `GDCAttLoc.forward` handed to `self.loc_conv` (Conv2d saves its input for the weight's gradient,
  line 1930) before the call at line 1954. The path runs GDCAttLoc.forward (att_prev None: made
  there, `att_prev[:, 0] = 1.0`) with last_attended_idx set so one of the two writes runs, and
  backward on the context vector. Controls: the call at 1954 handed `att_prev.clone()`.
"""

import _shim  # noqa: F401

import torch
from _check import attempt, expect_line
from _rewrite import rewritten, replaced
from espnet.nets import ctc_prefix_score
from espnet.nets.pytorch_backend.rnn import attentions

Scorer = ctc_prefix_score.CTCPrefixScoreTH
call = Scorer.__call__
expect_line(call, 179, "log_psi = torch.logsumexp(")
expect_line(call, 185, "log_psi[si, self.eos] = r_sum[self.end_frames[si // n_hyps], si]")
expect_line(call, 189, "log_psi[:, self.blank] = self.logzero")
LINE185 = ("log_psi[si, self.eos] = r_sum", "log_psi.data[si, self.eos] = r_sum")
LINE189 = ("log_psi[:, self.blank] = self.logzero", "log_psi.data[:, self.blank] = self.logzero")


def score(eos, grad=True):
    torch.manual_seed(0)
    B, T, O = 1, 6, 5
    w = torch.randn(B, T, O, requires_grad=grad)
    x = torch.log_softmax(w * 2, dim=-1)
    scorer = Scorer(x, [T], blank=0, eos=eos)
    scores, _ = scorer([[O - 1, 2]], None)
    if grad:
        scores.sum().backward()
    return scores


attempt("espnet/nets/ctc_prefix_score.py:185:IPF104", "path", "CTCPrefixScoreTH (eos == blank: only line 185), one prefix, backward",
        lambda: score(0))
with replaced(Scorer, "__call__", rewritten(call, [LINE185])):
    attempt("espnet/nets/ctc_prefix_score.py:185:IPF104", "control", "line 185 written through .data", lambda: score(0))
    attempt("espnet/nets/ctc_prefix_score.py:189:IPF104", "path",
            "CTCPrefixScoreTH (eos != blank: line 189 runs; line 185 through .data), one prefix, backward", lambda: score(4))
with replaced(Scorer, "__call__", rewritten(call, [LINE185, LINE189])):
    attempt("espnet/nets/ctc_prefix_score.py:189:IPF104", "control", "lines 185 and 189 written through .data", lambda: score(4))
for finding in ("espnet/nets/ctc_prefix_score.py:185:IPF104", "espnet/nets/ctc_prefix_score.py:189:IPF104"):
    attempt(finding, "context", "the scorer without grad (beam search)", lambda: score(4, grad=False))

Att = attentions.GDCAttLoc
forward = Att.forward
expect_line(attentions._apply_dynamic_filter, 1824, "p[:, :backward_idx] = 0")
expect_line(attentions._apply_dynamic_filter, 1826, "p[:, forward_idx:] = 0")
expect_line(forward, 1930, "att_conv = self.loc_conv(att_prev.view(batch, 1, 1, self.h_length))")
expect_line(forward, 1955, "att_prev, last_attended_idx, backward_window, forward_window")


def attend(last_attended_idx, backward_window, forward_window):
    torch.manual_seed(0)
    att = Att(eprojs=4, dunits=3, att_dim=5, aconv_chans=2, aconv_filts=1)
    T = 8
    enc = torch.randn(1, T, 4, requires_grad=True)
    trans = torch.rand(1, T, 1)
    out = att(enc, [T], trans, None, None, last_attended_idx=last_attended_idx,
              backward_window=backward_window, forward_window=forward_window)
    out[0].sum().backward()


CLONED = rewritten(forward, [("att_prev, last_attended_idx, backward_window, forward_window",
                              "att_prev.clone(), last_attended_idx, backward_window, forward_window")])
for line, args in ((1824, (4, 1, 8)), (1826, (0, 0, 3))):  # (idx, back, fwd): only the line's write runs
    finding = "espnet/nets/pytorch_backend/rnn/attentions.py:%d:IPF104" % line
    attempt(finding, "path", "GDCAttLoc.forward(last_attended_idx=%d, backward_window=%d, forward_window=%d), backward" % args,
            lambda: attend(*args))
    with replaced(Att, "forward", CLONED):
        attempt(finding, "control", "the filter handed att_prev.clone() (line 1955)", lambda: attend(*args))
