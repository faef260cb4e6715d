"""Stop 52 (prec52), OpenNMT-py 3.5.1 ``utils/loss.py:218``, ``:249``: the LM scores are detached
output divided by ``self.lm_prior_tau``, an attribute the constructor sets from its parameter
``lm_prior_tau=None`` (a float from the options). A constructor parameter is read as an input like
an argument (evidence of grad, gpytorch's ``self.factors``), but one whose default is a Python number
or None, or which every construction in the file passes a Python number, is a setting: no evidence,
so ``log_softmax`` is not shown to record anything and the write into its output is not proven.
Handed a tensor that requires grad (a learned temperature), the same code raises and stays proven;
so does gpytorch's ``Kron(*factors)`` (tests/test_recall24c.py)."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import proven, raises_inplace, run_program  # noqa: E402

PRIOR = '''\
import torch
import torch.nn.functional as F


class LMPrior:
    def __init__(self, gen, tau=None):
        self.gen, self.tau = gen, tau

    def loss(self, h):
        s = self.gen(h).detach().clone() / self.tau
        s = F.log_softmax(s, dim=-1)
        s[:, 0] = -50  # MARK
        return s


def main():
    lin = torch.nn.Linear(4, 5)
    s = LMPrior(lin, 2.0).loss(torch.randn(3, 4))
    (s.sum() + lin(torch.randn(3, 4)).sum()).backward()
    return lin.weight.grad
'''
# no default: the file's one construction passes a Python number
BUILT = PRIOR.replace("def __init__(self, gen, tau=None):", "def __init__(self, gen, tau):")
# a temperature that requires grad, handed at construction: raises
LEARNED = BUILT.replace("LMPrior(lin, 2.0)", "LMPrior(lin, torch.tensor(2.0, requires_grad=True))").replace(
    "    (s.sum() + lin(torch.randn(3, 4)).sum()).backward()\n", "    s.sum().backward()\n")


def _lines(source: str, mark: str) -> set:
    return {i for i, line in enumerate(source.splitlines(), 1) if line.endswith(mark)}


def _proven_lines(source: str) -> set:
    return {line for _, line in proven(source)}


@pytest.mark.parametrize("source", [PRIOR, BUILT], ids=["number-default", "built-with-a-number"])
def test_a_constructor_setting_is_no_evidence_of_grad(source):
    assert run_program(source) is not None
    assert not _lines(source, "# MARK") & _proven_lines(source)


def test_a_tensor_that_requires_grad_handed_at_construction_stays_proven():
    assert raises_inplace(LEARNED)
    assert _lines(LEARNED, "# MARK") <= _proven_lines(LEARNED)
