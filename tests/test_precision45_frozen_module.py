"""A module turned off (``m.requires_grad_(False)``, ``m.requires_grad = False`` is a tensor's)
turns off its parameters: writing into ``m.weight`` afterwards raises no leaf error (stop 45:
adapters 1.3.0's ``add_embeddings``, ``model_mixin.py:329``: ``embedding.requires_grad_(False)``,
then ``embedding.weight[idx] = reference...detach().clone()``, one false proven IPF105).
``leaves._frozen_before`` looks at the key's prefixes (``embedding`` for ``embedding.weight``).
Programs written from the pattern, each run with torch: the probes run and are not proven; the
look-alikes (the module turned off only after the write, or another module turned off) raise the
leaf error and stay proven."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import proven, raises_inplace  # noqa: E402

LEAF = "a leaf Variable that requires grad is being used in an in-place operation"

PROGRAM = '''\
import torch
from torch import nn


def add_embedding(vocab, reference, reference_vocab, dim):
    embedding = nn.Embedding(len(vocab), dim)
    embedding.weight.data.normal_(mean=0.0, std=0.02)
    {before}
    for token in set(vocab) & set(reference_vocab):
        embedding.weight[vocab[token]] = reference.weight[reference_vocab[token]].detach().clone()
    {after}
    return embedding


def main():
    reference = nn.Embedding(5, 4)
    return add_embedding({{"a": 0, "b": 1, "c": 2}}, reference, {{"a": 3, "c": 4}}, 4).weight.sum()
'''

LINEAR = '''\
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.proj.requires_grad_(False)
        self.proj.bias[0] = 1.0

    def forward(self, x):
        return self.proj(x)


def main():
    return Head(3)(torch.randn(2, 3)).sum()
'''


def test_a_module_turned_off_before_the_write_is_not_proven():
    source = PROGRAM.format(before="embedding.requires_grad_(False)", after="embedding.train(False)")
    assert not raises_inplace(source, "main", LEAF)
    assert proven(source) == []


def test_a_member_module_turned_off_before_the_write_is_not_proven():
    assert not raises_inplace(LINEAR, "main", LEAF)
    assert proven(LINEAR) == []


def test_the_module_turned_off_after_the_write_raises_and_stays_proven():
    source = PROGRAM.format(before="embedding.train(True)", after="embedding.requires_grad_(False)")
    assert raises_inplace(source, "main", LEAF)
    assert proven(source) != []


def test_another_module_turned_off_raises_and_stays_proven():
    source = PROGRAM.format(before="reference.requires_grad_(False)", after="embedding.train(False)")
    assert raises_inplace(source, "main", LEAF)
    assert proven(source) != []
