"""Stop 53 (prec53): the three false groups of the proven tier that fresh52b found on never-measured
code (bench/hazard_checks24/prec52b_probes.py), each a program that runs backward without the
in-place error and must not be proven, beside look-alikes that raise and stay proven:

- tensor-indexed-view (doctr's scatter-src-index-copy): ``values = output[..., src]`` with ``src``
  a tensor is an advanced-index copy (only a 0-d integer tensor index makes a view), so what an op
  saves of ``values`` (``scatter_reduce_``'s src, ``sin``'s input) never sees a later write of
  ``output``. The named view was read as one; a save through ``output[..., src]`` in place was
  already only possible. A basic slice or an int index stays a view, and proven;
- frozen-parameter-subclass (modelopt): a write that runs only under ``isinstance(p, Frozen)``,
  ``Frozen`` an ``nn.Parameter`` subclass whose ``__new__`` passes ``requires_grad=False``, writes
  a leaf that requires no grad. A subclass passing True, a flag, or a class of the file deriving
  from it that passes another flag, stays proven;
- attribute-operand-unknown (quark): ``w.matmul(L_row)`` with ``w`` requiring no grad records a
  backward (and keeps ``w``) only where ``L_row`` requires grad; ``L`` from a tensor attribute
  (``self.H``) whose requirement is never seen is no evidence that it does. ``L`` computed from an
  argument or from a module's weight stays proven.
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")



from tests.programs import marked as _marked, proven_lines as _proven_lines  # noqa: E402
from tests.programs import raises_proven as _real, runs_unproven as _safe  # noqa: E402


# ---------------------------------------------------------------- tensor-indexed-view
SCATTER = '''\
import torch


def constrain(logits: torch.Tensor, src: torch.Tensor, index: torch.Tensor, i: int, j):
    output = logits.clone()
    PICK
    output.scatter_reduce_(-1, index, values, reduce="amax", include_self=True)  # MARK
    return output


def main():
    logits = torch.randn(2, 5, requires_grad=True)
    src, index = torch.tensor([2, 4]), torch.tensor([[1, 3], [1, 3]])
    constrain(logits, src, index, 2, src).sum().backward()
    return logits.grad
'''

SINE = '''\
import torch


def squash(logits: torch.Tensor, src: torch.Tensor, i: int, j):
    output = logits.clone()
    PICK
    y = values.sin()
    output.mul_(2)  # MARK
    return output, y


def main():
    logits = torch.randn(2, 5, requires_grad=True)
    output, y = squash(logits, torch.tensor([2, 4]), 2, torch.tensor([2, 4]))
    (output.sum() + y.sum()).backward()
    return logits.grad
'''

COPIES = {
    "parameter": "values = output[..., src]",
    "moved": "values = output[..., src.to(output.device)]",
    "nonzero": "values = output[..., torch.nonzero(src >= 2).squeeze(1)]",
    "through-another": "rows = output[:, src]\n    values = rows[:, 0:2]",
    "then-a-view": "values = output[..., src].unsqueeze(0).squeeze(0)",
}
VIEWS = {
    "slice": "values = output[..., 2:4]",
    "int": "values = output[..., i:i + 2]",
}


@pytest.mark.parametrize("program", [SCATTER, SINE], ids=["scatter_reduce_", "sin"])
@pytest.mark.parametrize("pick", list(COPIES.values()), ids=list(COPIES))
def test_a_view_named_through_a_tensor_index_is_a_copy(program, pick):
    _safe(program.replace("PICK", pick))


@pytest.mark.parametrize("program", [SCATTER, SINE], ids=["scatter_reduce_", "sin"])
@pytest.mark.parametrize("pick", list(VIEWS.values()), ids=list(VIEWS))
def test_a_view_named_through_basic_indexing_stays_proven(program, pick):
    _real(program.replace("PICK", pick))


# ---------------------------------------------------------------- frozen-parameter-subclass
LOADER = '''\
import torch
from torch import nn


class Frozen(nn.Parameter):
    def __new__(cls, data):
        return super().__new__(cls, data, requires_grad=False)


class Pinned(Frozen):
    pass


class Spelled(nn.Parameter):
    def __new__(cls, data, *args):
        return nn.Parameter.__new__(cls, data, False)


EXTRA


def load(module, state):
    for name, param in module.named_parameters():
        if TEST:
            param.copy_(state[name])  # MARK


def main():
    lin = nn.Linear(3, 2)
    lin.weight = MADE(torch.zeros(2, 3))
    load(lin, {"weight": torch.ones(2, 3), "bias": torch.ones(2)})
    lin(torch.randn(4, 3, requires_grad=True)).sum().backward()
    return lin.bias.grad
'''
LEAF = "a leaf Variable that requires grad"

FROZEN_TESTS = {
    "class": ("isinstance(param, Frozen)", "Frozen"),
    "and": ("name in state and isinstance(param, Frozen)", "Frozen"),
    "tuple": ("isinstance(param, (Frozen, Pinned))", "Pinned"),
    "inherited-new": ("isinstance(param, Pinned)", "Pinned"),
    "parent-spelled": ("isinstance(param, Spelled)", "Spelled"),
}
THAWED = {
    "true": "class Thawed(nn.Parameter):\n    def __new__(cls, data):\n"
            "        return super().__new__(cls, data, requires_grad=True)",
    "default": "class Thawed(nn.Parameter):\n    def __new__(cls, data):\n        return super().__new__(cls, data)",
    "flag": "class Thawed(nn.Parameter):\n    def __new__(cls, data, requires_grad=True):\n"
            "        return super().__new__(cls, data, requires_grad)",
    "no-new": "class Thawed(nn.Parameter):\n    pass",
}


@pytest.mark.parametrize("test, made", list(FROZEN_TESTS.values()), ids=list(FROZEN_TESTS))
def test_a_write_only_into_a_parameter_subclass_made_without_grad_is_not_proven(test, made):
    _safe(LOADER.replace("EXTRA", "").replace("TEST", test).replace("MADE", made))


@pytest.mark.parametrize("extra", list(THAWED.values()), ids=list(THAWED))
def test_a_parameter_subclass_that_may_require_grad_stays_proven(extra):
    source = LOADER.replace("EXTRA", extra).replace("TEST", "isinstance(param, Thawed)").replace("MADE", "Thawed")
    _real(source, LEAF)


WRAPPER = '''\
import torch
from torch import nn


class Wrapper(nn.Parameter):
    def __new__(cls, data, metadata=None):
        instance = super().__new__(cls, data, requires_grad=False)
        instance.metadata = metadata
        return instance


def load(module, state, prefix=""):
    for name, param in module.named_parameters():
        if prefix + name in state and isinstance(param, Wrapper):
            if param.data.is_meta:
                param = Wrapper(state[prefix + name], metadata=param.metadata)
                module.register_parameter(name, param)
            else:
                param.copy_(state[prefix + name])  # MARK


def main():
    lin = nn.Linear(3, 2)
    lin.weight = NEW
    load(lin, {"weight": torch.ones(2, 3), "bias": torch.ones(2)})
    lin(torch.randn(4, 3, requires_grad=True)).sum().backward()
    return lin.bias.grad
'''


def test_modelopts_wrapper_bound_then_returned_in_a_nested_arm():
    """modelopt base_qtensor.py:189: `instance = super().__new__(cls, data, requires_grad=False)`, then
    `return instance`; the write is in the `else` of a test nested in the isinstance one, whose other arm
    binds the name to a new Wrapper."""
    _safe(WRAPPER.replace("NEW", "Wrapper(torch.zeros(2, 3))"))
    thawed = WRAPPER.replace("requires_grad=False)", "requires_grad=False)\n        instance.requires_grad_(True)")
    _real(thawed.replace("NEW", "Wrapper(torch.zeros(2, 3))"), LEAF)


def test_a_subclass_of_the_file_passing_true_keeps_the_class_proven():
    """``isinstance(p, Frozen)`` also holds for the file's ``Thawed(Frozen)``, whose instances require grad."""
    extra = "class Thawed(Frozen):\n    def __new__(cls, data):\n        return nn.Parameter.__new__(cls, data, True)"
    source = LOADER.replace("EXTRA", extra).replace("TEST", "isinstance(param, Frozen)").replace("MADE", "Thawed")
    _real(source, LEAF)


# ---------------------------------------------------------------- attribute-operand-unknown
HESSIAN = '''\
import torch
from torch import nn


class Hessian:
    def __init__(self, layer):
        self.layer = layer

    def add_batch(self, inp):
        self.H += inp.t() @ inp

    def solve(self, H):
        W = self.layer.weight.data.clone()
        W = W.float()
        L = FACTOR
        W1 = W[:, 0:4].clone()
        for i in range(4):
            w = W1[:, i]
            W1[:, i:] -= PRODUCT  # MARK
        return W1


def main():
    hs = Hessian(nn.Linear(4, 3))
    hs.H = torch.eye(4)
    x = torch.randn(8, 4, requires_grad=True)
    hs.add_batch(x.data)
    H = HANDED
    out = hs.solve(H)
    (out.sum() + hs.layer(x).sum()).backward()
    return x.grad
'''
PRODUCTS = {
    "matmul": "w.unsqueeze(1).matmul(L[i, i:4].unsqueeze(0))",
    "at": "w.unsqueeze(1) @ L[i, i:4].unsqueeze(0)",
    "torch.mm": "torch.mm(w.unsqueeze(1), L[i, i:4].unsqueeze(0))",
}


@pytest.mark.parametrize("product", list(PRODUCTS.values()), ids=list(PRODUCTS))
@pytest.mark.parametrize("factor", ["torch.linalg.cholesky(self.H)", "torch.tril(self.H)"], ids=["cholesky", "tril"])
def test_an_operand_from_an_attribute_of_unknown_requirement_proves_nothing(product, factor):
    _safe(HESSIAN.replace("FACTOR", factor).replace("PRODUCT", product).replace("HANDED", "None"))


@pytest.mark.parametrize("product", list(PRODUCTS.values()), ids=list(PRODUCTS))
@pytest.mark.parametrize("factor, handed", [
    ("torch.tril(H)", "torch.eye(4).requires_grad_()"),
    ("torch.tril(self.layer.weight.t() @ self.layer.weight)", "None"),
], ids=["argument", "module-weight"])
def test_an_operand_shown_to_require_grad_stays_proven(product, factor, handed):
    _real(HESSIAN.replace("FACTOR", factor).replace("PRODUCT", product).replace("HANDED", handed))


# ---------------------------------------------------------------- numpy-ufunc-operand (prec51b's unknown-call-operand)
BANDIT = '''\
import numpy as np
import torch
from torch import nn


class Bandit:
    def __init__(self, n):
        self.layer = nn.Linear(n, 2)
        self.sigma_inv = 0.1 * torch.eye(n)

    def update(self, n):
        g = MADE
        v = g.unsqueeze(-1)
        self.sigma_inv -= self.sigma_inv @ v @ v.T @ self.sigma_inv  # MARK
        return self.sigma_inv


def main():
    bandit = Bandit(4)
    out = bandit.update(4)
    torch.sin(out).sum().backward() if out.requires_grad else None
    return out
'''
UFUNCS = {
    "sqrt": "torch.ones(n) / np.sqrt(self.layer.weight.size(0))",
    "maximum": "torch.ones(n) * np.maximum(self.layer.weight.size(0), 1.0)",
    "exp-of-a-number": "torch.ones(n) * np.exp(-1.0)",
}
NOT_UFUNCS = {
    "requires-grad": "torch.ones(n).requires_grad_() / np.sqrt(self.layer.weight.size(0))",
    "squeeze-hands-the-tensor-back": "np.squeeze(torch.ones(1, n).requires_grad_())",
}


@pytest.mark.parametrize("made", list(UFUNCS.values()), ids=list(UFUNCS))
def test_a_numpy_ufunc_result_requires_no_grad(made):
    """agilerl neural_ts_bandit.py:286: `g = torch.ones(n) / np.sqrt(...)` requires no grad (a numpy ufunc
    refuses a tensor that requires grad), so `self.sigma_inv @ v` keeps self.sigma_inv for nothing."""
    _safe(BANDIT.replace("MADE", made))


@pytest.mark.parametrize("made", list(NOT_UFUNCS.values()), ids=list(NOT_UFUNCS))
def test_a_tensor_requiring_grad_beside_numpy_stays_proven(made):
    _real(BANDIT.replace("MADE", made))
