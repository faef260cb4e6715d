"""A ``forward`` argument read only through slices (``single = z[..., i:i + 1, :]`` handed to a
layer, then ``z[..., i:i + 1, :] = single``) is a tensor: an index tuple holding a slice or
``...`` is refused by lists, tuples and dicts of tensors, and what a torch layer accepts is a
tensor, so the value sliced is one. ``_used_as_tensor`` only read the argument handed over
whole, so the write into the tensor whose view the LayerNorm saved stayed possible ("the target
is not known to be a tensor"). Look-alikes: a list sliced with one slice (a list again) and
handed to a layer of the file, a slice handed to a conversion (``torch.as_tensor``) or an
argument rebound before its slice is taken, prove nothing; every program is run with torch."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import proven, raises_inplace, run_program  # noqa: E402

_PROGRAM = """import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(4)
        self.fc = nn.Linear(4, 4)

    def forward(self, z):
        for i in range(z.shape[1]):
            {body}
        return z


def main():
    emb = nn.Linear(3, 4)
    block = Block()
    z = emb(torch.randn(2, 3, 3))
    out = block(z)
    out.sum().backward()
    return emb.weight.grad
"""


def _source(body: str) -> str:
    return _PROGRAM.format(body=body.replace("\n", "\n            "))


@pytest.mark.parametrize("body, line", [
    # a name bound to the slice, handed to a layer that saves it (LayerNorm), written back
    ("single = z[..., i:i + 1, :]\nsingle = single + self.fc(self.ln(single))\nz[..., i:i + 1, :] = single", 15),
    # the slice handed over directly to a layer saving its input (Linear)
    ("h = self.fc(z[:, i:i + 1])\nz[:, i:i + 1] = h.tanh()", 14),
])
def test_an_argument_sliced_into_a_layer_is_a_tensor(body, line):
    source = _source(body)
    assert raises_inplace(source)
    assert [c for c, ln in proven(source) if ln == line and c == "IPF104"], proven(source)


_LIST_PROGRAM = """import torch
import torch.nn as nn


class Mean(nn.Module):
    def forward(self, parts):
        return torch.stack(parts).mean(0)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.mean = Mean()
        self.fc = nn.Linear(4, 4)

    def forward(self, zs):
        for i in range(len(zs)):
            single = zs[i:i + 1]
            h = self.fc(self.mean(single))
            zs[i:i + 1] = [h]
        return torch.stack(zs).sum()


def main():
    emb = nn.Linear(3, 4)
    zs = [emb(torch.randn(2, 3)) for _ in range(2)]
    Block()(zs).backward()
    return emb.weight.grad
"""


def test_a_list_sliced_into_a_layer_of_the_file_is_not_a_tensor():
    assert not raises_inplace(_LIST_PROGRAM)
    run_program(_LIST_PROGRAM)
    assert not [c for c, _ in proven(_LIST_PROGRAM) if c.startswith("IPF1")]


@pytest.mark.parametrize("body", [
    # a conversion takes anything: no evidence the value sliced is a tensor (here it is one,
    # the copy `as_tensor` hands back is not saved by anything that the write reaches)
    "single = torch.as_tensor(z[..., i:i + 1, :]).clone()\nz[..., i:i + 1, :] = self.fc(single)",
    # the slice is taken of a tensor the forward made (the argument rebound first): the copy is written
    "z = z.clone()\nsingle = z[..., i:i + 1, :].relu()\nz[..., i:i + 1, :] = single",
])
def test_look_alikes_that_run_stay_unproven(body):
    source = _source(body)
    assert not raises_inplace(source)
    run_program(source)
    assert not [c for c, _ in proven(source) if c == "IPF104"]


_OWN_LAYER = """import torch
import torch.nn as nn


class Att(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(4)
        self.fc = nn.Linear(4, 4)

    def forward(self, x, mask=None):
        return self.fc(self.ln(x))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.att = Att()

    def forward(self, z):
        for i in range(z.shape[1]):
            single = z[..., i:i + 1, :]
            single = single + self.att(single, mask=None)
            z[..., i:i + 1, :] = single
        return z


def main():
    emb = nn.Linear(3, 4)
    out = Block()(emb(torch.randn(2, 3, 3)))
    out.sum().backward()
    return emb.weight.grad
"""


def test_a_slice_handed_to_a_layer_of_the_file_with_keywords_is_a_tensor():
    """The layer is the file's own (its ``forward`` uses the argument as a tensor), called with
    a keyword besides: the positions of the arguments stand."""
    assert raises_inplace(_OWN_LAYER)
    assert ("IPF104", 24) in proven(_OWN_LAYER), proven(_OWN_LAYER)
