"""``locate`` and ``repair`` where the tensor saved and written has no storage: a sparse layout.
Found at stop 52 (dev case set17/1101, PyTorch3D 3b5ab51d, ``cot_laplacian``: ``L =
torch.sparse_coo_tensor(idx, cot.view(-1), (V, V))`` then ``L += L.t()``; the maintainers wrote
``L = L + L.t()``).

The locator matched a save and a later write by the storage they share; a sparse tensor has none
(``untyped_storage()`` raises), so its save was never registered and backward's failure came out as
a change "not seen: native code", with no line to fix. Such a tensor is matched by itself. The
look-alike: another sparse tensor, written in place and never saved, is not blamed.
"""

from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.locate import locate_target  # noqa: E402
from codemod.runtime.repair import render, repair  # noqa: E402

SYMMETRIC = '''\
import torch


def compute():
    torch.manual_seed(0)
    w = torch.randn(3, requires_grad=True)
    idx = torch.tensor([[0, 1, 2], [1, 2, 0]])
    ones = torch.sparse_coo_tensor(idx, torch.ones(3), (3, 3))
    ones += ones.t()
    L = torch.sparse_coo_tensor(idx, w * 2, (3, 3))
    L += L.t()
    x = torch.randn(3, 2)
    loss = (torch.sparse.mm(L, x).pow(2).sum() + torch.sparse.mm(ones, x).sum())
    loss.backward()
    return {"loss": loss.detach(), "w": w.grad}
'''
FIXED = SYMMETRIC.replace("    L += L.t()\n", "    L = L + L.t()\n")


def _run(text, tmp_path, name):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    namespace = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sparse invariant checks
        exec(compile(text, str(path), "exec"), namespace)
        return namespace["compute"]()


def test_the_program_raises_and_the_fix_runs(tmp_path):
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _run(SYMMETRIC, tmp_path, "orig")
    assert _run(FIXED, tmp_path, "fixed")["w"] is not None


def test_a_sparse_tensor_saved_then_written_is_located_at_its_write(tmp_path):
    path = tmp_path / "symmetric.py"
    path.write_text(SYMMETRIC)
    result = locate_target(f"{path}::compute")
    lines = [(c.save and c.save.line, c.mutation and c.mutation.line) for c in result.conflicts]
    # saved by sparse_coo_tensor (line 10), written at line 11; `ones` (written at line 9) is never saved
    assert lines == [(10, 11)], [c.describe() for c in result.conflicts]


def test_repair_rewrites_the_sparse_write_out_of_place_and_verifies(tmp_path):
    path = tmp_path / "symmetric.py"
    path.write_text(SYMMETRIC)
    result = repair(f"{path}::compute", devices=["cpu"])
    assert result.verified, render(result)
    assert result.repaired == FIXED, result.repaired
    got, want = _run(result.repaired, tmp_path, "got"), _run(FIXED, tmp_path, "want")
    assert torch.equal(got["w"], want["w"]) and torch.equal(got["loss"], want["loss"])
