"""Stop 58 (prec58): two false groups of the proven tier seen by fresh57 (bench/hazard_checks24/fresh57_probes.py,
precision.md "Stop 57 (fresh57, end of stop)"), each a program that runs backward without the in-place error and
must not be proven, beside look-alikes that raise and stay proven:

- index-only-saver (torchpq clustering/*KMeans*.py kmeanspp, 5 lines): the op that saved the written tensor hands
  its result only to ``.max(dim=...)``'s values and then ``.argmin()``, an integer index, or to the indices of a
  (values, indices) pair (``sort``, ``topk``, ``x.max(dim)[1]``): no backward ever reads what it saved. One
  mechanism, ``consumed.dead_result`` (prec54/55's comparison-only sinks): a ``values, idx = x.max(dim=1)``
  unpacking follows the values only (the indices are int64), ``x.max(dim)[1]`` drops the history, and the chain
  goes on through a call ``self.m(...)`` of a method of the class that stores nothing past its call with the flags
  the call leaves false (``self.sim(data, c)``, whose ``cos_sim`` writes its arguments only ``if inplace:``), in
  the hazard analysis and in the summaries (a caller of kmeanspp's function);
- the named saver is not the one that raises (torchpq cos_sim/euc_sim, 20 lines): the write runs only under
  ``if inplace:`` (a steady parameter defaulting to False), and the proof came through a call that leaves
  ``inplace`` false (or passes on a flag of its own that its caller leaves false), so that path never reaches the
  write. Such a call is no path: the proof (and its message) comes from a call that may pass the flag, or none.
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.config import Settings  # noqa: E402
from tests.programs import process_in_project, proven_lines, raises_inplace  # noqa: E402
from tests.programs import raises_proven as _real, runs_unproven as _safe  # noqa: E402


# ---------------------------------------------------------------- index-only-saver
def _pick(sims_to_index: str, extra_loss: str = "", after: str = "") -> str:
    return f'''\
import torch


def pick(data, k: int):
    centroids = torch.zeros(data.shape[0], k)
    centroids[:, 0] = data[:, 0]
    total = torch.zeros(())
    for i in range(1, k):
        current = centroids[:, :i]
        sims = data.transpose(0, 1) @ current
{sims_to_index}
        centroids[:, i] = data[:, index]  # MARK
{after}
    return centroids.sum(){extra_loss}


def main():
    x = torch.randn(3, 8, requires_grad=True)
    pick(x * 1, 3).backward()
    assert x.grad is not None
'''


UNPACKED = "        values, _ = sims.max(dim=1)\n        index = values.argmin(dim=0)"
INDEXED = "        index = sims.max(dim=1)[0].argmin()"
VALUES = "        index = sims.max(1).values.argmax()"
TORCH_MAX = "        best, where = torch.max(sims, 0)\n        index = where[best.argmax()]"
INDICES = "        index = sims.max(dim=0)[1][0]"
TOPK = "        vals, idx = sims.topk(2, dim=0)\n        index = idx[0, 0]"
SORTED = "        _, order = torch.sort(sims, dim=0)\n        index = order[-1, 0]"


@pytest.mark.parametrize("chain", [UNPACKED, INDEXED, VALUES, TORCH_MAX, INDICES, TOPK, SORTED],
                         ids=["unpacked", "indexed", "values", "torch-max", "indices", "topk", "sort"])
def test_a_saver_whose_result_ends_in_an_index_is_not_proven(chain):
    _safe(_pick(chain))


@pytest.mark.parametrize("chain, extra, after", [
    (UNPACKED, " + total", "        total = total + values.sum()"),  # the values reach the loss
    ("        top = sims.max(dim=1)[0]\n        index = top.argmin()", " + total", "        total = total + top.sum()"),
    ("        vals, idx = sims.topk(2, dim=0)\n        index = idx[0, 0]", " + total", "        total = total + vals.sum()"),
    # `max` of two tensors is one tensor: what unpacking it gives are rows that carry the history
    ("        hi, lo = sims[:2].max(sims[:2] * 0.5)\n        index = hi.argmax()", " + total", "        total = total + lo.sum()"),
], ids=["values-summed", "indexed-values-summed", "topk-values-summed", "elementwise-max"])
def test_a_saver_whose_values_reach_the_loss_stays_proven(chain, extra, after):
    _real(_pick(chain, extra, after))


KMEANS = '''\
import torch


class KMeans:
    def __init__(self, k: int, distance: str = "cosine"):
        self.k, self.distance = k, distance

    @staticmethod
    def cos_sim(a, b, inplace=False):
        a_norm = a.norm(dim=0, keepdim=True) + 1e-8
        b_norm = b.norm(dim=0, keepdim=True) + 1e-8
        if inplace:
            a.div_(a_norm)
            b.div_(b_norm)
        else:
            a = a / a_norm
            b = b / b_norm
        return a.transpose(-2, -1) @ b

    @staticmethod
    def euc_sim(a, b, inplace=False):
        y = a.transpose(-2, -1) @ b
        if inplace:
            a.pow_(2)
        else:
            a = a ** 2
        return 2 * y - a.sum(dim=0)[:, None] - (b ** 2).sum(dim=0)[None, :]

    def sim(self, a, b, inplace=False):
        if self.distance == "euclidean":
            return self.euc_sim(a, b, inplace=inplace)
        return self.cos_sim(a, b, inplace=inplace)

    def kmeanspp(self, data):
        centroids = torch.zeros(data.shape[0], self.k)
        centroids[:, 0] = data[:, 0]
        for i in range(1, self.k):
            current = centroids[:, :i]
            sims = self.sim(data, current)
            best, _ = sims.max(dim=1)
            index = best.argmin(dim=0)
            centroids[:, i] = data[:, index]  # MARK
        return centroids
{extra}

def main():
    x = torch.randn(3, 8, requires_grad=True)
    for distance in ("cosine", "euclidean"):
        model = KMeans(3, distance)
        {call}
'''


def test_a_method_helper_whose_result_ends_in_an_index_is_not_proven():
    _safe(KMEANS.format(extra="", call="model.kmeanspp(x * 1).sum().backward()"))


FIT = '''
    def fit(self, data):
        centroids = self.kmeanspp(data)
        data.mul_(2)  # MARK
        return centroids
'''


def test_a_caller_of_an_index_only_helper_is_not_proven():
    """The summaries ask the same: kmeanspp's save of ``data`` reaches only an index, so ``fit`` writing ``data``
    after it spoils nothing (main proves it through the summary of kmeanspp)."""
    _safe(KMEANS.format(extra=FIT, call="model.fit(x * 1).sum().backward()").replace(
        "centroids[:, i] = data[:, index]  # MARK", "centroids[:, i] = data[:, index]"))


@pytest.mark.parametrize("change", [
    # the helper keeps its product on the instance, and the loss reads it
    ("    def sim(self, a, b, inplace=False):\n",
     "    def sim(self, a, b, inplace=False):\n        self.last = self.cos_sim(a, b)\n",
     "model.kmeanspp(x * 1).sum().backward()", "(model.kmeanspp(x * 1).sum() + model.last.sum()).backward()"),
    # the values the helper's result gives reach the loss
    ("            index = best.argmin(dim=0)\n",
     "            index = best.argmin(dim=0)\n            self.spread = best.sum()\n",
     "model.kmeanspp(x * 1).sum().backward()", "(model.kmeanspp(x * 1).sum() + model.spread).backward()"),
], ids=["kept-on-the-instance", "values-kept"])
def test_a_method_helper_whose_product_is_reached_stays_proven(change):
    old, new, call, loss = change
    source = KMEANS.format(extra="", call=call).replace(old, new, 1).replace(call, loss)
    _real(source)


def test_a_method_helper_writing_an_argument_under_a_flag_passed_stays_proven():
    """``self.sim(data, current, inplace=True)`` runs ``b.div_(b_norm)`` on ``current``, a view of the centroids:
    the helper writes its argument, so its result is not the only way out of it (proven; it raises)."""
    source = KMEANS.format(extra="", call="model.kmeanspp(x * 1).sum().backward()")
    _real(source.replace("sims = self.sim(data, current)", "sims = self.sim(data, current, inplace=True)"))


def _reasons(source: str) -> list:
    result = process_in_project(source, Settings())
    return [(f.message, f.span.line) for f in result.findings if f.code.startswith("IPF1")]


# ---------------------------------------------------------------- the path through a flag left false
SCALE = '''\
import torch


def scale(a, s, inplace: bool = False):
    if inplace:
        a.mul_(s)  # MARK
        return a
    return a * s


def outer(x, inplace=False):
    return scale(x, 2.0, inplace=inplace)


def step(x, w):
    h = x * w
    y = {call}
    return (h + y).sum()


def main():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    step(x * 1, w).backward()
    assert w.grad is not None
'''


@pytest.mark.parametrize("call", ["scale(x, 2.0)", "scale(x, 2.0, False)", "outer(x)", "outer(x, inplace=False)"],
                         ids=["left-off", "literal-false", "passed-on-left-off", "passed-on-false"])
def test_a_write_under_a_flag_its_callers_leave_false_is_not_proven(call):
    _safe(SCALE.format(call=call))


@pytest.mark.parametrize("call", ["scale(x, 2.0, inplace=True)", "scale(x, 2.0, True)", "outer(x, True)"],
                         ids=["passed", "passed-by-position", "passed-on"])
def test_a_write_under_a_flag_a_caller_passes_stays_proven(call):
    _real(SCALE.format(call=call))


TWO_CALLERS = '''\
import torch


def scale(a, s, inplace: bool = False):
    if inplace:
        a.mul_(s)  # MARK
        return a
    return a * s


def first(x, w):
    h = x * w
    return (h + scale(x, 2.0)).sum()


def second(x, w):
    h = x * w
    return (h + scale(x, 2.0, inplace=True)).sum()


def main():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    first(x * 1, w).backward()
    second(x * 1, w).backward()
'''


def test_the_message_names_a_path_that_reaches_the_write():
    """Both callers saved x before the call; only ``second`` passes the flag: the proof names its line (18),
    not ``first``'s (13), which comes first in the file."""
    _real(TWO_CALLERS)
    (reason,) = [r for r, line in _reasons(TWO_CALLERS) if line == 6]
    assert "at line 18" in reason and "at line 13" not in reason, reason


def test_the_probe_file_holds_the_group():
    """fresh57_probes.py: the index-only-saver probe (21) is not proven, its control (35) stays."""
    import pathlib
    probes = (pathlib.Path(__file__).parent.parent / "bench" / "hazard_checks24" / "fresh57_probes.py").read_text()
    lines = proven_lines(probes)
    assert 21 not in lines and 35 in lines


# ---------------------------------------------------------------- a static method's first parameter
STATIC = '''\
import torch


class Similarity:
    @staticmethod
    def cos_sim(a, b):
        a_norm = a.norm(dim=0, keepdim=True) + 1e-8
        a.div_(a_norm)  # MARK
        return a.transpose(-2, -1) @ b


def main():
    x = torch.randn(3, 4, requires_grad=True)
    Similarity.cos_sim(x * 1, torch.randn(3, 2)).sum().backward()
'''


def test_a_static_methods_first_parameter_is_no_instance():
    """``a`` of a ``@staticmethod`` is an argument, not ``self``: ``a.norm(dim=0)`` is the tensor's op, which
    saves ``a`` (torchpq's cos_sim, named for the saver that raises; main read it as a method of the class)."""
    _real(STATIC)
    (reason,) = [r for r, line in _reasons(STATIC) if line == 8]
    assert "by `norm` at line 7" in reason, reason
