"""Stop 53 (lead), found merging prec53 and prec53b (bench/hazard_checks24/prec53_probes.py:79):

- a tensor made without grad (``xr = torch.rand(n)``) and then written in part with a value whose
  requirement the analysis does not see (``xr[:2] = ds[:2] / g``, ``g`` an argument) was judged to
  require no grad. So the new no-grad-save rule made the real conflict only possible, with a reason
  that says "``xr`` does not" require grad. Such a write makes the answer unknown, not "no";
- the same program with a copying index (``ii = torch.nonzero(m).flatten()``, ``xr[ii]``) is the
  advanced-index-copy group in the inline form: ``clip`` saves a copy, which the write never touches;
- a matrix product keeps each operand only for the other's gradient (``w @ L``): the save of ``w``
  needs evidence that ``L`` requires grad, whatever ``w``'s own requirement (quark's form, now with
  ``W1`` of unknown requirement because of its own in-place update).
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import marked as _marked, proven, raises_inplace, run_program  # noqa: E402

CLIP = '''\
import torch


def clipped(ds: torch.Tensor, g: torch.Tensor):
    PICK
    xr = torch.rand(len(ds))
    xr[IDX] = ds[IDX].float() / g
    xr[IDX] = torch.clip(xr[IDX], 0.05, 1.5)  # MARK
    return xr


def main():
    ds = torch.tensor([0.5, 2.0, 3.0, 0.2])
    g = torch.tensor(2.0, requires_grad=True)
    globals()["clipped"](ds, g).sum().backward()  # (a caller the analysis does not read: g's grad unseen)
    return g.grad
'''



def test_a_write_of_unseen_grad_makes_the_requirement_unknown_and_the_conflict_stays_proven():
    source = CLIP.replace("PICK", "pass").replace("IDX", ":2")
    assert raises_inplace(source)
    assert _marked(source) <= {line for _, line in proven(source)}


def test_an_inline_copying_index_through_flatten_proves_nothing():
    source = CLIP.replace("PICK", "ii = torch.nonzero(ds > 1).flatten()").replace("IDX", "ii").replace(
        'globals()["clipped"](ds, g)', "clipped(ds, g)")  # g shown to require grad: only the index decides
    run_program(source)  # clip saved a copy: backward runs
    assert not _marked(source) & {line for _, line in proven(source)}


HESSIAN = '''\
import torch
from torch import nn


class Hessian:
    def __init__(self, layer):
        self.layer = layer

    def solve(self):
        W1 = self.layer.weight.data.clone()
        L = torch.linalg.cholesky(self.H)
        for i in range(3):
            w = W1[:, i]
            W1[:, i:] -= w.unsqueeze(1) @ L[i, i:3].unsqueeze(0)  # MARK
        return W1


def main():
    hs = Hessian(nn.Linear(3, 2))
    hs.H = HANDED
    x = torch.randn(4, 3, requires_grad=True)
    (hs.solve().sum() + hs.layer(x).sum()).backward()
    return x.grad
'''


def test_a_product_operand_is_kept_only_for_the_others_grad():
    source = HESSIAN.replace("HANDED", "torch.eye(3)")
    run_program(source)
    assert not _marked(source) & {line for _, line in proven(source)}


def test_the_product_raises_where_the_other_operand_requires_grad():
    """The control: with ``H`` requiring grad at run time the write raises. The analysis sees no
    evidence of that in ``solve`` (an attribute set outside), so it is possible, not proven."""
    assert raises_inplace(HESSIAN.replace("HANDED", "torch.eye(3).requires_grad_()"))


@pytest.mark.parametrize("bound", ["ii = []", "ii = [0, 2]"])
def test_a_name_bound_to_a_list_of_ints_indexes_by_copying(bound):
    """cellpose denoise.py:115: ``ii = []``, later ``ii = torch.nonzero(...).flatten()``: every binding
    reaching the write copies."""
    pick = f"{bound}\n    if len(ds) > 3:\n        ii = torch.nonzero(ds > 1).flatten()"
    source = CLIP.replace("PICK", pick).replace("IDX", "ii").replace('globals()["clipped"](ds, g)', "clipped(ds, g)")
    run_program(source)
    assert not _marked(source) & {line for _, line in proven(source)}
