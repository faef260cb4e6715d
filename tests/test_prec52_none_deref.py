"""Stop 52 (prec52), funasr 1.4.16 CIF/PIF predictors (paraformer ``cif_predictor.py:99``, ``:298``,
bicif ``:291``, e_paraformer ``pif_predictor.py:113``, ``:117``): ``alphas`` is relu's output; with a
mask it is rebound to ``alphas * mask`` before the write; without one, ``mask.squeeze(-1)`` raises
AttributeError before the write. The only pass on which the write meets relu's output dies on None
first, so the write is not proven. The same code stays proven where that pass survives: the branch
keeps relu's output (no rebinding, or a view of it), the read of ``mask`` may not run (behind a
conditional expression), or ``mask`` is bound again on the None branch."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import proven, raises_inplace, run_program  # noqa: E402

CIF = '''\
import torch
from torch import nn


class Cif(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 1)

    def forward(self, hidden, target_length, mask=None, chunk=None, flag=False):
        with torch.autocast("cpu", enabled=False):
            alphas = torch.nn.functional.relu(self.proj(hidden))
            if mask is not None:
                mask = mask.transpose(-1, -2).float()
                alphas = alphas * mask
            if chunk is not None:
                alphas = alphas * chunk
            alphas = alphas.squeeze(-1)
            mask = mask.squeeze(-1)
            token_num = alphas.sum(-1)
            if target_length is not None:
                alphas *= (target_length / token_num)[:, None]  # MARK
            return alphas, mask


def main():
    cif = Cif()
    alphas, _ = cif(torch.randn(2, 3, 4), torch.tensor([2.0, 3.0]), torch.ones(2, 1, 3))
    alphas.sum().backward()
    try:
        cif(torch.randn(2, 3, 4), torch.tensor([2.0, 3.0]))
    except AttributeError:
        return cif.proj.weight.grad
    raise AssertionError("no mask: the pass must die on None")
'''
WITH_MASK = "    alphas, _ = cif(torch.randn(2, 3, 4), torch.tensor([2.0, 3.0]), torch.ones(2, 1, 3))\n"
# the branch does not rebind alphas: relu's output is written with a mask too
KEPT = CIF.replace("\n                alphas = alphas * mask\n", "\n")
# the branch rebinds alphas to a view of relu's output
VIEWED = CIF.replace("alphas = alphas * mask\n", "alphas = alphas[:, :3]\n")
# the read of mask may not run (a conditional expression): without a mask the pass goes on to the write
GUARDED = CIF.replace("mask = mask.squeeze(-1)\n", "mask = mask.squeeze(-1) if flag else mask\n").replace(
    WITH_MASK, "    alphas, _ = cif(torch.randn(2, 3, 4), torch.tensor([2.0, 3.0]))\n")
# mask bound again on the None branch: its read does not fail
FILLED = CIF.replace("                alphas = alphas * mask\n",
                     "                alphas = alphas * mask\n            else:\n                mask = torch.ones(2, 3, 1)\n"
                     ).replace(WITH_MASK, "    alphas, _ = cif(torch.randn(2, 3, 4), torch.tensor([2.0, 3.0]))\n")


def _lines(source: str, mark: str) -> set:
    return {i for i, line in enumerate(source.splitlines(), 1) if line.endswith(mark)}


def _proven_lines(source: str) -> set:
    return {line for _, line in proven(source)}


def test_a_write_reached_only_where_none_was_read_is_not_proven():
    assert run_program(CIF) is not None  # with a mask: backward runs; without: AttributeError first
    assert not _lines(CIF, "# MARK") & _proven_lines(CIF)


@pytest.mark.parametrize("source", [KEPT, VIEWED, GUARDED, FILLED], ids=["kept", "viewed", "guarded", "filled"])
def test_a_pass_that_survives_stays_proven(source):
    assert raises_inplace(source)
    assert _lines(source, "# MARK") <= _proven_lines(source)
