"""Stop 50 (prec50): the four groups of false proven findings prec49 found on never-measured code.

Each group is a program that runs backward without the in-place error (torch below) and must not
be proven, beside look-alikes that do raise and must stay proven:

- exclusive arms (fairseq 0.12.2 ``search.py:699``): ``probs = lprobs.exp_()`` on the ``elif`` arm
  and again on the ``else`` arm; a binding on another arm of the innermost ``if`` holding both, with
  no loop around, never reaches the write (``branches.other_arm``).
- a chained save detached next (fairseq ``text_guide_cross_entropy_acc.py:129``):
  ``p = lt.exp().masked_fill_(m, 0)``, then ``p = p.detach()``: the write's result, the only handle
  on exp's output, reaches no backward (``consumed.dead_result`` of the write itself).
- a helper's mul by an inverted mask (fairseq ``wav2vec2.py:560``, ``utils.index_put``): the
  helper's ``torch.mul(tensor, ~indices)`` saves ``tensor`` only for ``~indices``' gradient, and
  ``~`` makes an integral value, which never requires grad; the helper's device test
  (``torch.is_tensor``, ``tensor.dim()``) saves nothing either.
- a tensor parameter as index (mmpretrain 1.2.0 ``ofa_modules.py:1133``/``:1134``): ``x[~masks]``
  with ``masks: Optional[torch.Tensor]`` makes a copy unless ``masks`` is a 0-d integer tensor;
  the save through it is possible, not proven (``argmax()`` of a whole tensor, 0-d, stays a view).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import proven, raises_inplace, run_program  # noqa: E402

ARMS = '''\
import torch


def step(lprobs, k: int):
    if k > 0:
        lprobs, idx = lprobs.topk(k)
        probs = lprobs.exp_()
    else:
        probs = lprobs.exp_()  # MARK
    return probs


def main():
    w = torch.rand(6, requires_grad=True)
    for k in (0, 2):
        (step(w * torch.randn(3, 6), k) * 3.0).sum().backward()
    return w.grad
'''
_ARMS = """    if k > 0:
        lprobs, idx = lprobs.topk(k)
        probs = lprobs.exp_()
    else:
        probs = lprobs.exp_()  # MARK"""
# the same write after the first on one path (no `else`), or on a later turn of a loop: raises
SEQUENCE = ARMS.replace(_ARMS, """    probs = lprobs.exp_()
    if k > 0:
        probs = lprobs.exp_()  # MARK""")
TURNS = ARMS.replace(_ARMS, """    for j in (k, 0):
        if j > 0:
            probs = lprobs.exp_()  # MARK
        else:
            probs = lprobs.exp_()""")

DETACHED = '''\
import torch


def guide(lt, lp, mask):
    pt = lt.exp().masked_fill_(mask, 0)  # MARK
    pt = pt.detach()
    return -(pt * lp).sum()


def main():
    w = torch.rand(6, requires_grad=True)
    guide(w * torch.randn(3, 6), torch.log_softmax(w * torch.randn(3, 6), -1), torch.rand(3, 6) > 0.5).backward()
    return w.grad
'''
KEPT = DETACHED.replace("    pt = pt.detach()\n", "")
KEPT_BESIDE = DETACHED.replace("    pt = pt.detach()\n    return -(pt * lp).sum()",
                               "    q = pt.detach()\n    return -(pt * lp).sum() + q.sum()")

HELPER = '''\
import torch


def is_xla(tensor):
    return torch.is_tensor(tensor) and tensor.device.type == "xla"


def put(tensor, indices, value):
    if is_xla(tensor):
        for _ in range(indices.dim(), tensor.dim()):
            indices = indices.unsqueeze(-1)
        tensor = torch.mul(tensor, ~indices) + torch.mul(value, indices)
    else:
        tensor[indices] = value
    return tensor


def preds(x, y, mask):
    logits = torch.cosine_similarity(x, y, dim=-1) / 0.1
    logits[1:] = put(logits[1:], mask, float("-inf"))  # MARK
    return logits


def main():
    w = torch.rand(6, requires_grad=True)
    out = preds(w * torch.randn(4, 3, 6), w * torch.randn(4, 3, 6), torch.tensor([[True, False, False]] * 3))
    out.masked_fill(torch.isinf(out), 0).sum().backward()
    return w.grad
'''
# the helper's mul by a value that requires grad saves the view `logits[1:]` (on a path that runs): raises
WEIGHTED = HELPER.replace("torch.mul(tensor, ~indices)", "torch.mul(tensor, value)") \
    .replace("    if is_xla(tensor):", "    if tensor.dim() > 0:") \
    .replace('put(logits[1:], mask, float("-inf"))', "put(logits[1:], mask, x[0, :, 0].reshape(3, 1))")

MASKED = '''\
from typing import Optional

import torch
from torch import nn


class Dec(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(8)
        self.ln2 = nn.LayerNorm(8)
        self.emb = nn.Embedding(30, 8)

    def forward(self, ids, masks: Optional[torch.Tensor] = None):
        x = self.emb(ids) * 2.0
        if masks is None or not masks.any():
            x = self.ln(x)
        else:
            x[~masks] = self.ln(x[~masks])  # MARK
            x[masks] = self.ln2(x[masks])  # MARK
        return x


def main():
    model = Dec()
    model(torch.randint(0, 30, (4, 5)), torch.tensor([True, False, True, False])).sum().backward()
    return model.emb.weight.grad
'''
# `argmax()` of a whole tensor is a 0-d integer tensor: a view's index, and the write raises
PICKED = MASKED.replace("""            x[~masks] = self.ln(x[~masks])  # MARK
            x[masks] = self.ln2(x[masks])  # MARK""", """            i = x.sum(-1).sum(-1).argmax()
            x[i] = self.ln(x[i])  # MARK""")


def _marked(source: str, code: str) -> set:
    return {(code, i) for i, line in enumerate(source.splitlines(), 1) if line.endswith("# MARK")}


@pytest.mark.parametrize("source, code", [
    (ARMS, "IPF103"), (DETACHED, "IPF103"), (HELPER, "IPF104"), (MASKED, "IPF104"),
], ids=["exclusive-arms", "detached-next", "helper-mul-by-inverted-mask", "tensor-parameter-index"])
def test_the_false_groups_run_backward_and_are_not_proven(source, code):
    assert run_program(source) is not None
    assert not _marked(source, code) & set(proven(source))


@pytest.mark.parametrize("source, code", [
    (SEQUENCE, "IPF103"), (TURNS, "IPF103"), (KEPT, "IPF103"), (KEPT_BESIDE, "IPF103"),
    (WEIGHTED, "IPF104"), (PICKED, "IPF104"),
], ids=["sequence", "loop-turns", "kept", "kept-beside-a-detached-copy", "helper-mul-by-grad", "argmax-index"])
def test_the_look_alikes_raise_and_stay_proven(source, code):
    assert raises_inplace(source)
    assert _marked(source, code) <= set(proven(source))
