"""A sparse constructor (``torch.sparse_coo_tensor(indices, values, size)``, the compressed ones)
keeps its result for backward where its values require grad: the values' gradient is masked by
the sparse tensor it built. A write into that tensor afterwards trips backward; PyTorch3D's
``cot_laplacian`` (set17/1101) builds ``L`` and then symmetrises it in place, ``L += L.t()``.
The analysis could not see into these calls.

The data (``op_forms``) is checked against torch, each look-alike that raises is run with
torch, and each control runs backward and stays unproven: values that require no grad, a write
into a dense or coalesced copy of the sparse tensor, and a write into the values before they are handed over.
"""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn.functional as F

from codemod.analysis import op_forms
from tests.programs import raises_proven, runs_unproven

_POINTERS, _COLUMNS = [0, 1, 2, 3], [1, 2, 0]
_BUILD = {
    "torch.sparse_coo_tensor": lambda v: torch.sparse_coo_tensor(torch.tensor([[0, 1, 2], [1, 2, 0]]), v, (3, 3)),
    "torch.sparse_csr_tensor": lambda v: torch.sparse_csr_tensor(torch.tensor(_POINTERS), torch.tensor(_COLUMNS), v, (3, 3)),
    "torch.sparse_csc_tensor": lambda v: torch.sparse_csc_tensor(torch.tensor(_POINTERS), torch.tensor(_COLUMNS), v, (3, 3)),
    "torch.sparse_bsr_tensor": lambda v: torch.sparse_bsr_tensor(
        torch.tensor(_POINTERS), torch.tensor(_COLUMNS), v.reshape(3, 1, 1), (3, 3)),
    "torch.sparse_bsc_tensor": lambda v: torch.sparse_bsc_tensor(
        torch.tensor(_POINTERS), torch.tensor(_COLUMNS), v.reshape(3, 1, 1), (3, 3)),
    "torch.sparse_compressed_tensor": lambda v: torch.sparse_compressed_tensor(
        torch.tensor(_POINTERS), torch.tensor(_COLUMNS), v, (3, 3), layout=torch.sparse_csr),
}


def _backward_after(build, write: bool) -> bool:
    """Whether backward raises the in-place error after ``build``'s tensor is (or is not) written."""
    values = torch.rand(3, dtype=torch.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        made = build(values * 1)
        if write:
            made.mul_(2)
        try:
            made.to_dense().sum().backward()
        except RuntimeError as exc:
            assert "modified by an inplace operation" in str(exc)
            return True
    return False


def test_the_sparse_constructors_are_every_one_measured():
    assert set(_BUILD) == op_forms.SPARSE_CONSTRUCTORS


@pytest.mark.parametrize("name", sorted(_BUILD))
def test_a_sparse_constructor_keeps_its_result(name):
    assert _backward_after(_BUILD[name], write=True)
    assert not _backward_after(_BUILD[name], write=False)


@pytest.mark.parametrize("mode", sorted(op_forms.SAVING_MODES | op_forms.PLAIN_MODES))
@pytest.mark.parametrize("shape", [(2, 3, 5), (1, 2, 5, 5), (1, 1, 4, 4, 4)])
def test_pad_modes_keep_the_input_as_measured(mode, shape):
    leaf = torch.rand(*shape, dtype=torch.float64, requires_grad=True)
    x = leaf * 1
    padded = F.pad(x, [1, 1] * (len(shape) - 2), mode=mode)
    x.add_(0)
    try:
        padded.sum().backward()
        raised = False
    except RuntimeError as exc:
        assert "modified by an inplace operation" in str(exc)
        raised = True
    assert raised == (mode in op_forms.SAVING_MODES)


HEAD = """import torch


def laplacian(values, n):
    idx = torch.stack([torch.arange(n), (torch.arange(n) + 1) % n])
    return torch.sparse_coo_tensor(idx, values, (n, n))

"""

RAISING = {
    "coo-then-symmetrised-in-place": """
def main():
    w = torch.rand(4, requires_grad=True)
    cot = w * 2
    idx = torch.tensor([[0, 1, 2, 3], [1, 2, 3, 0]])
    L = torch.sparse_coo_tensor(idx, cot, (4, 4), dtype=torch.float32)
    L += L.t()  # MARK
    torch.sparse.mm(L, torch.ones(4, 1)).sum().backward()
""",
    "csr-then-mul_": """
def main():
    w = torch.rand(3, requires_grad=True)
    M = torch.sparse_csr_tensor(torch.tensor([0, 1, 2, 3]), torch.tensor([1, 2, 0]), w + 1, (3, 3))
    M.mul_(0.5)  # MARK
    M.to_dense().sum().backward()
""",
    "helper-built-then-mul_": """
def main():
    w = torch.rand(4, requires_grad=True)
    L = laplacian(w.exp(), 4)
    L.mul_(2)  # MARK
    L.to_dense().sum().backward()
""",
}

CONTROLS = {
    "values-require-no-grad": """
def main():
    w = torch.rand(4, requires_grad=True)
    idx = torch.tensor([[0, 1, 2, 3], [1, 2, 3, 0]])
    L = torch.sparse_coo_tensor(idx, torch.ones(4), (4, 4))
    L += L.t()  # MARK
    (torch.sparse.mm(L, torch.ones(4, 1)).sum() * w).sum().backward()
""",
    "dense-copy-written": """
def main():
    w = torch.rand(4, requires_grad=True)
    L = laplacian(w * 2, 4)
    D = L.to_dense()
    D += 1  # MARK
    D.sum().backward()
""",
    "coalesced-copy-written": """
def main():
    w = torch.rand(4, requires_grad=True)
    L = laplacian(w * 2, 4)
    C = L.coalesce()
    C.mul_(2)  # MARK
    C.to_dense().sum().backward()
""",
    "values-written-before-the-constructor": """
def main():
    w = torch.rand(4, requires_grad=True)
    values = w * 2
    values += 1  # MARK
    L = laplacian(values, 4)
    L.to_dense().sum().backward()
""",
}


@pytest.mark.parametrize("name", sorted(RAISING))
def test_a_write_into_a_built_sparse_tensor_is_proven(name):
    raises_proven(HEAD + RAISING[name])


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_writes_the_constructor_never_kept_stay_unproven(name):
    runs_unproven(HEAD + CONTROLS[name])
