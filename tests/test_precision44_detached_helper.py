"""A helper's result computed only from a detached tensor requires no grad (torchao 0.18.0's
``UnifQuantizer.quantize``, stop 44's precision measurement: three false proven findings, open).
``q, mean = self.remove_mean(p.detach())`` (a staticmethod returning ``p - mean, mean``), then
``torch.maximum(q, -q_max)`` and ``q.copy_(...)``: nothing the maximum reads requires grad, so it
saves nothing and the program runs. The constants analysis (``requires_grad.Constants``) does not
follow a tuple unpacking of a call into the callee's returns, so the write was proven (strict
xfail until stop 45: ``Constants`` reads the file's helper, ``helper_returns``); the control (the same with ``p`` itself handed over) raises and stays
proven. Each program is run with torch."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import proven, raises_inplace  # noqa: E402

PROGRAM = '''\
import torch


class Base:
    @staticmethod
    def remove_mean(p):
        mean = p.mean()
        return p - mean, mean


class Quantizer(Base):
    def quantize(self, p):
        q, mean = self.remove_mean({handed})
        q_max = torch.max(q.abs())
        q.copy_(torch.minimum(torch.maximum(q, -q_max), q_max))
        return q + mean


def example():
    w = torch.randn(4, 8, requires_grad=True)
    out = Quantizer().quantize(w * 1.0)
    if out.requires_grad:
        out.sum().backward()
'''


def test_a_helpers_result_from_a_detached_argument_requires_no_grad():
    source = PROGRAM.format(handed="p.detach()")
    assert not raises_inplace(source, "example")
    assert proven(source) == []


def test_the_same_helper_handed_the_tensor_itself_raises_and_staysproven():
    source = PROGRAM.format(handed="p")
    assert raises_inplace(source, "example")
    assert [code for code, _ in proven(source)] == ["IPF103"]
