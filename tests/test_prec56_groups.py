"""Stop 56 (prec56): false groups of the proven tier seen by fresh55 (bench/hazard_checks24/fresh55_probes.py),
each a program that runs backward without the in-place error and must not be proven, beside look-alikes that
raise and stay proven.

- flag-exclusive-alias, the self-saving scatter (buctoolkit's optimisers and solvers: the owner and the working
  tensor, ``if self._hold: self.v = self._v`` / ``else: self.v.index_copy_(1, idx, self._v)``): the proof said the
  write spoils what the same call saved, because on some path the written tensor IS the saved argument. But
  index_copy_, index_add_, scatter_, scatter_add_, index_put_ and put_ refuse, in
  the forward, a source that shares memory with the tensor they write ("some elements of the input tensor and the
  written-to tensor refer to a single memory location"), before they save or write anything. So where the two
  are one tensor nothing is saved; where they are two, the write does not touch the saved one. (Two disjoint
  views of one base share a version counter but no memory: the op runs and backward raises; still proven.)
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import proven_lines, raises_inplace  # noqa: E402
from tests.programs import raises_proven as _real, runs_unproven as _safe  # noqa: E402

# ---------------------------------------------------------------- flag-exclusive-alias: the call saves its own source
SCATTER = '''\
import torch


class Scatter:
    def __init__(self, hold, n):
        self.hold = hold
        self.v = torch.zeros(n)

    def commit(self, idx):
        if self.hold:
            self.v = self._v
        else:
            WRITE  # MARK


def run(hold):
    leaf = torch.rand(3, requires_grad=True)
    s = Scatter(hold, 6)
    for _ in range(2):  # the working tensor rebound before each commit
        s._v = leaf * 2.0
        s.commit(torch.tensor([0, 2, 5]))
    return s.v.sum()


def main():
    run(False).backward()
    run(True).backward()
'''

# the ops of codemod.analysis.hazard.OVERLAP_REFUSED (the analysis knows index_copy_ and put_ to save their source)
SELF_SAVING = [
    "self.v.index_copy_(0, idx, self._v)",
    "self.v.index_add_(0, idx, self._v)",
    "self.v.index_copy_(0, idx, source=self._v)",
    "self.v.scatter_(0, idx, self._v)",
    "self.v.scatter_add_(0, idx, self._v)",
    "self.v.put_(idx, self._v)",
    "self.v.index_put_((idx,), self._v)",
]


@pytest.mark.parametrize("write", ["self.v.index_copy_(0, idx, self._v)", "self.v.put_(idx, self._v)"])
def test_self_saving_scatter_whose_alias_is_the_other_arm_is_not_proven(write):
    _safe(SCATTER.replace("WRITE", write))


@pytest.mark.parametrize("write", [
    "self.v.scatter_reduce_(0, idx, self._v, 'sum')",
    "self.v.index_reduce_(0, idx, self._v, 'prod')",
])
def test_a_reducing_scatter_saves_its_result_and_stays_proven(write):
    """They refuse the overlap too, but save their own result, which the next commit writes: raises."""
    _real(SCATTER.replace("WRITE", write))


@pytest.mark.parametrize("write", SELF_SAVING)
def test_the_alias_made_on_every_path_is_refused_in_the_forward(write):
    """The one order that would make them one tensor (nothing rebound after the alias) raises before backward."""
    source = SCATTER.replace("WRITE", write).replace("        if self.hold:\n            self.v = self._v\n"
                                                     "        else:\n            ", "        self.v = self._v\n        ")
    assert raises_inplace(source, message="refer to a single memory location")
    assert 13 not in proven_lines(source)


def test_the_same_name_as_source_is_not_proven():
    source = '''\
import torch


def same(leaf, idx):
    x = leaf * 2
    y = x
    x.index_copy_(0, idx, y)  # MARK
    return x.sum()


def main():
    same(torch.rand(3, requires_grad=True), torch.tensor([0, 2, 1])).backward()
'''
    assert raises_inplace(source, message="refer to a single memory location")
    assert 7 not in proven_lines(source)


OTHER_SAVER = '''\
import torch


class Scatter:
    def __init__(self, hold, n):
        self.hold = hold
        self.v = torch.zeros(n)

    def commit(self, idx):
        if self.hold:
            self.v = self._v
        s = SAVER
        WRITE  # MARK
        return s


def main():
    leaf = torch.rand(6, requires_grad=True)
    s = Scatter(True, 6)
    s._v = leaf * 2.0
    out = s.commit(torch.tensor([0, 2, 5]))
    (out.sum() + s.v.sum()).backward()
'''


@pytest.mark.parametrize("saver, write", [
    ("self._v * 1.0", "self.v.addcmul_(self._v, self._v)"),  # a pointwise op takes the written tensor as input
])
def test_a_pointwise_self_saver_stays_proven(saver, write):
    _real(OTHER_SAVER.replace("SAVER", saver).replace("WRITE", write))


LOCAL = '''\
import torch


def commit(v, leaf, idx, hold):
    w = leaf * 2.0
    if hold:
        v = w
    s = SAVER
    WRITE  # MARK
    return s.sum() + v.sum()


def main():
    commit(torch.zeros(6), torch.rand(6, requires_grad=True), torch.tensor([0, 2, 5]), True).backward()
'''


@pytest.mark.parametrize("saver, write", [
    ("w.sin()", "v.index_copy_(0, idx, torch.zeros(3))"),  # another op saved it, the scatter writes it
    ("w * w", "v.index_add_(0, idx, torch.ones(3))"),
    ("w * w", "v.mul_(w)"),
])
def test_a_save_the_scatter_does_not_make_itself_stays_proven(saver, write):
    _real(LOCAL.replace("SAVER", saver).replace("WRITE", write))


def test_disjoint_views_of_one_base_stay_proven():
    """``a`` and ``b`` share no memory (index_copy_ runs) but one version counter: the write spoils ``b``."""
    _real('''\
import torch


def siblings(leaf, idx):
    base = leaf.repeat(2) * 2
    a = base[:6]
    b = base[6:]
    a.index_copy_(0, idx, b)  # MARK
    return a.sum() + b.sum()


def main():
    siblings(torch.rand(6, requires_grad=True), torch.tensor([0, 2, 1, 3, 5, 4])).backward()
''')


# ---------------------------------------------------------------- comparison-only-saver, through a helper
# (buctoolkit CG.py:108, :136, :160, :184: `__check_restart` returns `ortho_check | ((-gg + beta * gp) >= 0.)`; the
# product saves beta, which the caller then writes with masked_fill_, but the product reaches only a comparison)
RESTART = '''\
import torch


class CG:
    @staticmethod
    def _check_restart(gg, g, p, beta):
        BODY

    def direction(self, g, g_old, p):
        gogo = torch.sum(g_old * g_old, dim=-1, keepdim=True)
        gg = torch.sum(g * g, dim=-1, keepdim=True)
        beta = gg / gogo
        is_restart = self._check_restart(gg, g, p, beta)
        beta.masked_fill_(is_restart, 0.0)  # MARK
        return -g + beta * p


def main():
    g = torch.randn(4, 3, requires_grad=True)
    CG().direction(g, torch.randn(4, 3), torch.randn(4, 3, requires_grad=True)).sum().backward()
'''

COMPARED = [
    "gp = torch.sum(g * p, dim=-1, keepdim=True)\n        return (-gg + beta * gp) >= 0.0",
    "gp = torch.sum(g * p, dim=-1, keepdim=True)\n        ortho = torch.abs(gg) > 0.1\n"
    "        return ortho | ((-gg + beta * gp) >= 0.0)",
    "return (beta * torch.sum(g * p, dim=-1, keepdim=True)).gt(gg)",
    "gp = torch.sum(g * p, dim=-1, keepdim=True)\n        value = beta * gp\n        return value > gg",
]


@pytest.mark.parametrize("body", COMPARED)
def test_a_helper_whose_save_reaches_only_a_comparison_does_not_prove(body):
    _safe(RESTART.replace("BODY", body))


@pytest.mark.parametrize("body", [
    "gp = torch.sum(g * p, dim=-1, keepdim=True)\n        return -gg + beta * gp",  # the product handed back
    "gp = torch.sum(g * p, dim=-1, keepdim=True)\n        value = beta * gp\n        return value",
    "gp = torch.sum(g * p, dim=-1, keepdim=True)\n        return (beta * gp, (beta * gp) >= gg)[0]",
])
def test_a_helper_that_hands_the_product_back_stays_proven(body):
    source = RESTART.replace("BODY", body).replace(
        "is_restart = self._check_restart(gg, g, p, beta)\n        beta.masked_fill_(is_restart, 0.0)",
        "value = self._check_restart(gg, g, p, beta)\n        beta.masked_fill_(value >= 0.0, 0.0)").replace(
        "return -g + beta * p", "return -g + beta * p + value")
    _real(source)


@pytest.mark.parametrize("keeper", [
    "def inner():\n        return z * 2.0\n\n    return inner",  # a closure reads what the helper saved
    "return lambda: z * 2.0",
    "keep.last = z\n    return lambda: keep.last * 2.0",
])
def test_a_helper_whose_saved_value_a_closure_keeps_stays_proven(keeper):
    _real(f'''\
import torch


def keep(x):
    z = torch.sin(x)
    {keeper}


def main():
    w = torch.rand(3, requires_grad=True)
    x = w * 2.0
    f = keep(x)
    x.mul_(3.0)  # MARK
    f().sum().backward()
''')
