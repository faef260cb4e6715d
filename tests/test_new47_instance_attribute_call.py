"""A call of an instance attribute the class assigns (``self.conv2d = Wrapper()`` in
``__init__``; ``self.conv2d(img)``) runs the object stored there: its result is what that object
returns, not a tensor because the attribute's name is a tensor method's (``conv2d``). Taken for a
tensor, ``x, _, _ = self.conv2d(img)`` iterated it (``Tensor.__iter__`` is ``unbind(0)``) and ``x``
became an output of a multi-output view, refused in place (stop 47: torchgeo 0.8.1
``models/panopticon.py:167``, ``x += chn_embs.unsqueeze(2)`` in ``ChnAttn.forward`` with ``x``
unpacked from ``self.conv3d(x)``, a ``Conv3dWrapper`` returning ``(view, hp, wp)``: proven, false,
labelled by running in bench/hazard_checks24/torchgeo_checks.py). Programs written from the
pattern, run with torch: the probe runs backward and is not proven; the look-alike whose wrapper
returns one tensor (so the unpacking does iterate it and ``x`` is an output of unbind) raises and
stays proven."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.config import Settings  # noqa: E402
from tests.programs import process_in_project, run_program  # noqa: E402

TEMPLATE = '''\
import torch
from torch import nn


class Wrapper(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 2, stride=2)

    def forward(self, x):
        x = self.conv(x.unsqueeze(1))
        hp, wp = x.shape[-2:]
        return RETURNED


class Fuse(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(5, 4)

    def forward(self, x, ids):
        x += self.emb(ids).unsqueeze(1)
        return x.sum(1)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv2d = Wrapper()
        self.fuse = Fuse()

    def forward(self, img, ids):
        x, _, _ = self.conv2d(img)
        return self.fuse(x, ids)


def main():
    torch.manual_seed(0)
    model = Model()
    img = torch.randn(3, 4, 4, requires_grad=True)
    model(img, torch.tensor([0, 1, 2])).sum().backward()
    return img.grad
'''

PROBE = TEMPLATE.replace("RETURNED", "x.flatten(-2).permute(0, 2, 1), hp, wp")
LOOK_ALIKE = TEMPLATE.replace("RETURNED", "x.flatten(-2).permute(0, 2, 1)")


def _proven(source: str) -> list:
    result = process_in_project(source, Settings())
    return [(f.code, f.span.line) for f in result.findings if f.code.startswith("IPF1")]


def _raises(source: str) -> bool:
    try:
        run_program(source, "main")
        return False
    except RuntimeError as exc:
        assert "inplace" in str(exc) or "in-place" in str(exc), exc
        return True


def test_unpacking_a_returned_tuple_display_is_no_refused_view():
    assert not _raises(PROBE)
    assert _proven(PROBE) == []


def test_unpacking_a_returned_tensor_iterates_it_and_stays_proven():
    assert _raises(LOOK_ALIKE)
    assert [line for code, line in _proven(LOOK_ALIKE)] == [22]
