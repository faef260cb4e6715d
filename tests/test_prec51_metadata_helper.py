"""Stop 51 (prec51), point-transformer-pytorch 0.1.5 ``point_transformer_pytorch.py:83``: a
written output whose only other use is ranking (``_, idx = t.topk(k)``, the values dropped) is
never backpropagated, so what made it saved nothing backward reads. Handing the tensor to a
helper of the file that reads only its metadata (``torch.finfo(t.dtype).max``) is no use of its
values: it must not make the write proven. A helper that reads the values (``t.max()``), or
topk's values reaching the loss, raise and stay proven.
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import proven, raises_inplace, run_program  # noqa: E402

DTYPE_HELPER = '''\
import torch
from torch import nn


def max_value(t):
    return torch.finfo(t.dtype).max


def shape_of(t, dim=-1):
    n = t.size(dim)
    return n if t.dim() > 1 else t.shape[0]


class Knn(nn.Module):
    def forward(self, pos, mask, k: int = 3):
        rel_dist = (pos[:, :, None, :] - pos[:, None, :, :]).norm(dim=-1)
        mask_value = max_value(rel_dist)
        k = min(k, shape_of(rel_dist))
        rel_dist.masked_fill_(~mask, mask_value)  # MARK
        _, idx = rel_dist.topk(k, largest=False)
        return idx


def main():
    torch.manual_seed(0)
    pos = torch.randn(2, 6, 3, requires_grad=True)
    mask = torch.rand(2, 6, 6) > 0.2
    idx = Knn()(pos, mask)
    (pos[:, idx[0, 0, 0]] ** 2).sum().backward()
    return pos.grad
'''
# topk's values reach the loss: norm's backward reads its written output
VALUES_READ = DTYPE_HELPER.replace("_, idx = rel_dist.topk(k, largest=False)\n        return idx",
                                   "dist, idx = rel_dist.topk(k, largest=False)\n        return dist").replace(
    "idx = Knn()(pos, mask)\n    (pos[:, idx[0, 0, 0]] ** 2).sum().backward()", "Knn()(pos, mask).sum().backward()")
# a helper that reads the values (its result reaches the loss through the written tensor's values)
VALUE_HELPER = VALUES_READ.replace("return torch.finfo(t.dtype).max", "return t.max() + 1")


def _marked(source: str) -> set:
    return {i for i, line in enumerate(source.splitlines(), 1) if line.endswith("# MARK")}


def _proven_lines(source: str) -> set:
    return {line for _, line in proven(source)}


def test_a_helper_reading_only_metadata_is_no_use():
    assert run_program(DTYPE_HELPER) is not None
    assert not _marked(DTYPE_HELPER) & _proven_lines(DTYPE_HELPER)


@pytest.mark.parametrize("source", [VALUES_READ, VALUE_HELPER], ids=["values-read", "value-helper"])
def test_the_look_alikes_raise_and_stay_proven(source):
    assert raises_inplace(source)
    assert _marked(source) <= _proven_lines(source)
