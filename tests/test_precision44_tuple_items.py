"""Items of a Python tuple are distinct objects, not views of one tensor (torchao 0.18.0's Float8
``aten.addmm_`` implementations, stop 44's precision measurement: two false proven IPF103). ``bias,
inp, w = (args[0], args[1], args[2])`` where ``args`` is the dispatcher's argument tuple: a write into
``bias`` leaves ``inp``'s version alone, so a helper's save of ``inp`` is not broken. The sibling rule
("``z1, z2 = z[:, :c], z[:, c:]``: one version counter") holds for a tensor ``z``; with bare integer
items it needs ``z`` shown to be a tensor (a tensor's ``z[0]``, ``z[1]`` do share one counter: a
control that stays proven). Each program is run with torch."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import proven, raises_inplace  # noqa: E402

HELPER = '''\
import torch


def _addmm_impl(input_tensor, weight_tensor):
    return torch.matmul(input_tensor, weight_tensor)


def addmm_inplace(func, types, args, kwargs):
    bias_tensor, input_tensor, weight_tensor = (
        args[0],
        args[1],
        args[2],
    )
    out = _addmm_impl(input_tensor, weight_tensor)
    return bias_tensor.add_(out)


def example():
    w = torch.randn(3, 2, requires_grad=True)
    x = torch.randn(4, 3, requires_grad=True) * 1.0
    b = torch.zeros(4, 2) * 1.0
    {call}.sum().backward()
'''

TUPLE = "addmm_inplace(None, (), (b, x, w), {})"
TENSOR = '''\
import torch


def rows(z, w):
    first, second = z[0], z[1]
    out = torch.matmul(second, w)
    first.add_(1.0)
    return out


def example():
    w = torch.randn(3, 3, requires_grad=True)
    z = torch.randn(2, 3, requires_grad=True) * 1.0
    rows(z, w).sum().backward()
'''


def test_items_of_an_argument_tuple_are_no_views_of_one_tensor():
    source = HELPER.format(call=TUPLE)
    assert not raises_inplace(source, "example")
    assert proven(source) == []


def test_integer_items_of_a_tensor_share_one_version_counter_and_stayproven():
    assert raises_inplace(TENSOR, "example")
    assert proven(TENSOR) == [("IPF103", 7)]
