"""Stop 46 (lead): ``a.expand_as(b)``, ``view_as``, ``reshape_as`` and ``type_as`` take only a shape or
a dtype from ``b``: the result requires grad when ``a`` does, whatever ``b`` is (measured with torch).

Found by the libs check on the merged main: once ``scatter_reduce_`` was measured to save its result
(recall46), torch_geometric's ``utils/_scatter.py:111`` (``fill = torch.full(...).expand_as(src)``, a first
``scatter_reduce_`` of it into zeros, a second one of ``src`` into that output) was proven (IPF103), as if
``fill`` carried ``src``'s grad; nothing was recorded by the first op, and the program runs backward.
"""

from __future__ import annotations

import pytest
import torch

from codemod.config import Settings
from codemod.engine.pipeline import process_source
from tests.programs import run_program

PROGRAM = '''\
import torch


def smax(src, index, size, dim):
    fill = torch.full((1, ), 0.0, dtype=src.dtype).{method}(src)
    out = src.new_zeros(size).scatter_reduce_(dim, index, fill, reduce="amax", include_self=True)
    return out.scatter_reduce_(dim, index, src, reduce="amax", include_self=True)


def main():
    src = torch.randn(6, 3, requires_grad=True)
    index = torch.tensor([0, 0, 1, 1, 2, 2]).view(-1, 1).expand(6, 3)
    smax(src, index, (3, 3), 0).sum().backward()
    return [src.grad]
'''
# the look-alike whose fill does carry src's grad: the first op saves its output, the second writes it
RAISING = PROGRAM.replace("torch.full((1, ), 0.0, dtype=src.dtype).{method}(src)", "src.min().expand_as(src)")


def proven(source: str) -> list:
    result = process_source(source.encode(), "case.py", Settings(select=("IPF1",)))
    assert result.error is None
    return [(f.code, f.span.line) for f in result.findings]


@pytest.mark.parametrize("method", ["expand_as", "view_as", "reshape_as", "type_as"])
def test_a_shape_argument_carries_no_grad(method: str):
    source = PROGRAM.format(method=method) if method != "view_as" else \
        PROGRAM.format(method="expand_as").replace("fill = torch.full((1, ), 0.0, dtype=src.dtype).expand_as(src)",
                                                   "fill = torch.zeros(6, 3).view_as(src)")
    if method == "reshape_as":
        source = source.replace("torch.full((1, ), 0.0, dtype=src.dtype).reshape_as(src)", "torch.zeros(18).reshape_as(src)")
    if method == "type_as":
        source = source.replace("torch.full((1, ), 0.0, dtype=src.dtype).type_as(src)", "torch.zeros(6, 3).type_as(src)")
    grads = run_program(source)  # runs backward: nothing the first op records
    assert torch.isfinite(grads[0]).all()
    assert proven(source) == []


def test_a_fill_made_of_the_input_stays_proven():
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run_program(RAISING)
    assert proven(RAISING) == [("IPF103", 7)]


# torch_geometric utils/_scatter.py:111 (open at stop 46; fixed at stop 48, prec48: the dim and index of
# scatter_reduce_ and the argument of expand_as are no evidence of grad)
def test_a_shape_argument_carries_no_grad_without_a_caller():
    source = PROGRAM.format(method="expand_as").split("\n\ndef main")[0] + "\n"
    assert proven(source) == []
