"""Stop 49 (prec49): the four groups of the false proven findings, as programs of my own (not the
libraries' code). `inplacefix check --no-cache` on main e3574f0 proves the lines marked PROVEN; run
this file (torch 2.13) and every function runs forward and backward with inputs requiring grad
without an in-place error (the controls marked RAISES show the same shape of code that does raise).
This file is data for the lead, not a test: nothing under codemod/ changed at prec49.
"""

import torch
from torch import nn


# exclusive-arms (fairseq search.py:699): the write on one arm is read as following the other arm's.
def arms(lprobs, k: int):
    if k > 0:
        probs = lprobs.exp_()
    else:
        probs = lprobs.exp_()  # PROVEN IPF103 ("output of lprobs.exp_() at" the if arm)
    return probs


# saved-by-detached-result (fairseq text_guide_cross_entropy_acc.py:129)
def teacher_guide(lt, lp, mask):
    pt = lt.exp().masked_fill_(mask, 0)  # PROVEN IPF103
    pt = pt.detach()
    return -(pt * lp).sum()


# helper-mul-by-mask (fairseq wav2vec2.py:560): the helper's summary says mul saved `tensor`.
def on_tpu(t):
    return t.device.type == "xla"


def put(tensor, indices, value):
    if on_tpu(tensor):
        tensor = torch.mul(tensor, ~indices) + torch.mul(value, indices)
    else:
        tensor[indices] = value
    return tensor


def preds(x, y, mask):
    logits = torch.cosine_similarity(x, y, dim=-1) / 0.1
    logits[1:] = put(logits[1:], mask, float("-inf"))  # PROVEN IPF104 ("saved ... by put via torch.mul")
    return logits


# inverted-mask-index (mmpretrain ofa_modules.py:1133): `x[~m]` is read as a basic index (a view);
# `~` of a tensor is a tensor index, a copy. A comparison index (`x[m > 0]`) is already not proven.
class Dec(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(8)
        self.emb = nn.Embedding(30, 8)

    def forward(self, ids, mask):
        x = self.emb(ids) * 2.0
        x[~mask] = self.ln(x[~mask])  # PROVEN IPF104 ("x was saved for backward by torch.nn.LayerNorm")
        return x

    def known_mask(self, ids):
        m = ids > 3
        x = self.emb(ids) * 2.0
        x[~m] = torch.sin(x[~m])  # PROVEN IPF104 ("x was saved for backward by torch.sin")
        return x

    def sliced(self, ids):
        x = self.emb(ids) * 2.0
        x[:2] = self.ln(x[:2])  # a view: RAISES at backward (correctly proven)
        return x


if __name__ == "__main__":
    w = torch.rand(6, requires_grad=True)
    for k in (0, 2):
        (arms(w * torch.randn(3, 6), k) * torch.rand(3, 6)).sum().backward()
    teacher_guide(w * torch.randn(3, 6), torch.log_softmax(w * torch.randn(3, 6), -1),
                  torch.rand(3, 6) > 0.5).backward()
    x, y = w * torch.randn(4, 3, 6), w * torch.randn(4, 3, 6)
    out = preds(x, y, torch.tensor([[True, False, False]] * 3))
    out.masked_fill(torch.isinf(out), 0).sum().backward()
    d = Dec()
    d(torch.randint(0, 30, (4, 5)), torch.tensor([True, False, True, False])).sum().backward()
    d.known_mask(torch.randint(0, 30, (4, 5))).sum().backward()
    try:
        d.sliced(torch.randint(0, 30, (4, 5))).sum().backward()
        raise SystemExit("the sliced control did not raise")
    except RuntimeError as exc:
        assert "modified by an inplace operation" in str(exc)
    print("all ran; the sliced control raised")
