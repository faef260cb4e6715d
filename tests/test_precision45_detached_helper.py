"""What a helper of the file returns from what requires no grad requires no grad (stop 45, the
group of torchao 0.18.0's ``UnifQuantizer.quantize``: ``q, mean = super().remove_mean(p.detach())``
then ``torch.maximum(q, -q_max)`` and ``q.copy_(...)``; three false proven findings at stop 44).

``requires_grad.Constants`` now reads a helper the file shows alone (``helper_returns``): a
module-level function, a method of the class or of its one base class of the file (``self.m``,
``super().m``, ``C.m`` of a ``staticmethod``): the call is constant where everything it hands over
is, the helper's defaults are literals, and every ``return`` is constant with the parameters taken
as constant (the receiver not). Programs written from the pattern's description, each run with
torch: the probes run without error and are not proven; the look-alikes (the tensor itself handed,
a parameter of the module or a global that requires grad mixed in, an override in a subclass)
raise at backward and stay proven."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import proven, raises_inplace  # noqa: E402

# torchao's shape, in one file: a staticmethod of the base class reached by super(), a
# module-level helper for the range, an in-place clamp with a finfo bound.
QUANTIZER = '''\
from typing import Optional

import torch
from torch import Tensor


def get_q_max(q: Tensor, b: int, dim: Optional[int] = None) -> Tensor:
    q_abs = q.abs()
    if dim is not None:
        return torch.minimum(b * q_abs.mean(dim=dim, keepdim=True), torch.max(q_abs, dim=dim, keepdim=True).values)
    return torch.minimum(b * q_abs.mean(), torch.max(q_abs))


class Quantizer:
    def __init__(self, center=True):
        self.center = center

    @staticmethod
    def remove_mean(p: Tensor, dim: Optional[int] = None) -> tuple[Tensor, Tensor]:
        mean = p.mean(dim=dim, keepdim=dim is not None)
        q = p - mean
        return q, mean


class UnifQuantizer(Quantizer):
    def quantize(self, p: Tensor, b: int, dim: Optional[int] = None) -> Tensor:
        if self.center:
            q, mean = super().remove_mean({handed}, dim=dim)
        else:
            q = p.detach().clone()
            mean = torch.zeros(1, dtype=p.dtype, device=p.device)
        q_max = get_q_max(q, b, dim=dim)
        q_max.clamp_(min=torch.finfo(q.dtype).tiny)
        q.copy_(torch.minimum(torch.maximum(q, -q_max), q_max))
        s = q_max / (2 ** (b - 1) - 0.5)
        q.div_(s).round_().mul_(s)
        if self.center:
            q += mean
        return q


def example():
    w = torch.randn(4, 8, requires_grad=True)
    out = UnifQuantizer().quantize(w * 1.0, 2)
    if out.requires_grad:
        out.sum().backward()
'''

# A module-level helper returning a pair; the first piece is clamped in place.
MODULE_HELPER = '''\
import torch


def centered(x, eps=1e-6):
    m = x.mean(dim=-1, keepdim=True)
    return x - m, x.std(dim=-1, keepdim=True) + eps


def example():
    w = torch.randn(3, 5, requires_grad=True)
    z, s = centered({handed})
    y = torch.maximum(z, -s)
    z.clamp_(-1.0, 1.0)
    out = y * 2.0
    if out.requires_grad:
        out.sum().backward()
'''

# A method of the class itself (the receiver is not read for the result), handed `.data`.
OWN_METHOD = '''\
import torch
from torch import nn


class Scaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(5))

    def _unit(self, x):
        return x / x.norm(dim=-1, keepdim=True), x.abs().amax()

    def forward(self, h):
        u, top = self._unit({handed})
        k = torch.maximum(u, -top)
        u.mul_(0.5)
        return h * self.w + k


def example():
    h = torch.randn(3, 5, requires_grad=True)
    out = Scaler()(h)
    out.sum().backward()
'''

# A staticmethod called through its class's name.
CLASS_STATIC = '''\
import torch


class Ops:
    @staticmethod
    def squash(x):
        return torch.tanh(x) * 3.0


def example():
    w = torch.randn(4, requires_grad=True)
    y = Ops.squash({handed})
    e = torch.maximum(y, y.mean())
    y.add_(1.0)
    out = e.sum()
    if out.requires_grad:
        out.backward()
'''

PROBES = {
    "super_staticmethod_pair": (QUANTIZER, "p.detach()"),
    "module_helper_pair": (MODULE_HELPER, "w.detach()"),
    "own_method_data": (OWN_METHOD, "h.data"),
    "class_staticmethod": (CLASS_STATIC, "w.detach()"),
}


@pytest.mark.parametrize("name", sorted(PROBES))
def test_a_helpers_result_from_what_requires_no_grad_is_not_proven(name):
    program, handed = PROBES[name]
    source = program.format(handed=handed)
    assert not raises_inplace(source, "example")
    assert proven(source) == []


HANDED_ITSELF = {
    "super_staticmethod_pair": (QUANTIZER, "p"),
    "module_helper_pair": (MODULE_HELPER, "w"),
    "own_method_data": (OWN_METHOD, "h"),
    "class_staticmethod": (CLASS_STATIC, "w"),
}


@pytest.mark.parametrize("name", sorted(HANDED_ITSELF))
def test_the_same_helper_handed_the_tensor_itself_raises_and_stays_proven(name):
    program, handed = HANDED_ITSELF[name]
    source = program.format(handed=handed)
    assert raises_inplace(source, "example")
    assert proven(source) != []


# The helper mixes in what requires grad besides what it is handed: a parameter of the module,
# a global tensor, a second argument; or a subclass overrides the helper.
RECEIVER_PARAMETER = '''\
import torch
from torch import nn


class Scaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(5))

    def _unit(self, x):
        return x * self.w, x.abs().amax()

    def forward(self, h):
        u, top = self._unit(h.detach())
        k = torch.maximum(u, -top)
        u.mul_(0.5)
        return k


def example():
    h = torch.randn(3, 5, requires_grad=True)
    Scaler()(h).sum().backward()
'''

GLOBAL_TENSOR = '''\
import torch

W = torch.randn(4, requires_grad=True)


def shifted(x):
    return x + W, x.abs().amax()


def example():
    w = torch.randn(4, requires_grad=True)
    y, t = shifted(w.detach())
    e = torch.maximum(y, -t)
    y.add_(1.0)
    e.sum().backward()
'''

SECOND_ARGUMENT = '''\
import torch


def mix(x, y):
    return x * 0.5 + y, x.abs().amax()


def example():
    w = torch.randn(4, requires_grad=True)
    v = torch.randn(4, requires_grad=True)
    y, t = mix(w.detach(), v)
    e = torch.maximum(y, -t)
    y.add_(1.0)
    e.sum().backward()
'''

OVERRIDDEN = '''\
import torch
from torch import nn


class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(5))

    def _unit(self, x):
        return x / x.norm(dim=-1, keepdim=True), x.abs().amax()

    def forward(self, h):
        u, top = self._unit(h.detach())
        k = torch.maximum(u, -top)
        u.mul_(0.5)
        return k


class Weighted(Base):
    def _unit(self, x):
        return x * self.w, x.abs().amax()


def example():
    h = torch.randn(3, 5, requires_grad=True)
    Weighted()(h).sum().backward()
'''

LOOK_ALIKES = {
    "receiver_parameter": RECEIVER_PARAMETER,
    "global_tensor": GLOBAL_TENSOR,
    "second_argument": SECOND_ARGUMENT,
    "overridden_in_a_subclass": OVERRIDDEN,
}


@pytest.mark.parametrize("name", sorted(LOOK_ALIKES))
def test_a_helper_that_mixes_in_what_requires_grad_raises_and_stays_proven(name):
    source = LOOK_ALIKES[name]
    assert raises_inplace(source, "example")
    assert proven(source) != []
