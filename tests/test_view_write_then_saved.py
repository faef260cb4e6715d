"""A write into a piece of a split that is also saved for backward, written again in a loop
(issue 23, family C): the view error comes first, a saved-tensor conflict behind it.

Written from the shape of pointer-generator decoders (a softmax over vocabulary and copy scores,
split into the two parts, the copy scores added into the vocabulary part one source position at a
time with ``scatter_``), not from a corpus case. The reference for a view error (writes into
copies) used to run the later writes as the program does, so it failed on the saved tensor and
nothing could be proven; it now snapshots what autograd saves, as the copy meaning of a leaf
does: the writes after the copy are the program's own and judged the oracle's way.
"""

from __future__ import annotations

import runpy

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.repair import render, repair  # noqa: E402

POINTER = '''\
import torch
import torch.nn as nn


class PointerHead(nn.Module):
    def __init__(self, hidden=6, vocab=5, source=3):
        super().__init__()
        self.vocab = vocab
        self.score = nn.Linear(hidden, vocab + source)
        self.gate = nn.Parameter(torch.ones(vocab))

    def forward(self, h, source_ids):
        probs = self.score(h).log_softmax(-1)
        vocab_part, copy_part = probs.split([self.vocab, probs.shape[-1] - self.vocab], dim=-1)
        total = h.new_zeros(())
        for i in range(copy_part.shape[-1]):
            index = source_ids[:, i:i + 1]
            total = total + (vocab_part * self.gate).sum()
            merged = torch.logaddexp(vocab_part.gather(1, index), copy_part[:, i:i + 1])
            vocab_part.scatter_(1, index, merged)
        return vocab_part, total


def compute():
    torch.manual_seed(0)
    head = PointerHead()
    h = torch.randn(2, 6)
    source_ids = torch.tensor([[1, 3, 1], [0, 4, 2]])
    scores, total = head(h, source_ids)
    (scores.logsumexp(-1).sum() + total).backward()
    return {n: p.grad for n, p in head.named_parameters()}
'''

OUT_OF_PLACE = POINTER.replace("            vocab_part.scatter_(1, index, merged)\n",
                               "            vocab_part = vocab_part.scatter(1, index, merged)\n")


def grads(path):
    return runpy.run_path(str(path))["compute"]()


def test_the_out_of_place_scatter_is_written_and_computes_what_the_snapshot_meaning_computes(tmp_path):
    path = tmp_path / "pointer.py"
    path.write_text(POINTER)
    with pytest.raises(RuntimeError, match="is a view and is being modified inplace"):
        grads(path)
    result = repair(f"{path}::compute", devices=["cpu"])
    assert result.verified, render(result)
    assert result.repaired == OUT_OF_PLACE
    want = tmp_path / "want.py"
    want.write_text(OUT_OF_PLACE)
    got = tmp_path / "got.py"
    got.write_text(result.repaired)
    for name, value in grads(want).items():
        assert torch.equal(value, grads(got)[name]), name


def test_a_rewrite_that_drops_the_later_writes_is_not_verified(tmp_path):
    """Control: the snapshot makes the reference run, it does not make anything verify."""
    from codemod.runtime.verify import Verdict, verify

    path = tmp_path / "pointer.py"
    path.write_text(POINTER)
    dropped = POINTER.replace("            vocab_part.scatter_(1, index, merged)\n",
                              "            vocab_part = vocab_part.clone()\n")
    result = verify(f"{path}::compute", rewritten_source=dropped, devices=["cpu"])
    assert result.verdict is Verdict.NOT_VERIFIED
