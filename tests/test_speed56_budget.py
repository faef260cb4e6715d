"""Issue 27 (stop 56): buffers written from each other cost no longer exponential time, and a search that
runs out of its budget proves nothing.

``b0 = torch.zeros(...)`` ... ``b{n-1} = torch.zeros(...)``, then every buffer written from every other
(``b0[:, 1:] = b0[:, 1:] ** 2 + b1[:, 1:] * x[:, 1:]``), only ``torch.argmin(b0)`` returned: no backward
ever runs through them, so none of the writes breaks one. Until stop 56 two searches asked along every
path through the buffers: whether a write's value reaches a backward (``hazard._written_unreached``, all
orders of the buffers being asked) and whether a buffer requires grad (``GradRequirement._rg``, every
chain of writes); 5 buffers took 5 s, 6 took 60 s, 7 over 300 s (a real function of 7 such buffers:
prec55). Now the first keeps each answer for the set being asked (an answer depends on the write, the
name and that set only), and both count their steps: past a budget the answer is unknown, and from then
on the module proves nothing (``SemanticModel.budget_spent``; ``Hazards.explain`` and ``Rule.report``
demote a proven hazard to possible).
"""

from __future__ import annotations

import collections
from typing import Callable, Counter

import pytest
import torch

from codemod.analysis.hazard import Producers, UnreachedSearch
from codemod.analysis.model import SemanticModel
from codemod.analysis.source import Source
from codemod.analysis.views import GradRequirement
from codemod.config import Settings
from codemod.engine.pipeline import check_source

_CAP = 1_000_000  # calls before a test gives up (the code before stop 56 made many millions: hours)


def buffers(n: int) -> str:
    """``n`` fresh buffers, each written from every other, only ranked at the end."""
    lines = ["import torch", "", "", "def f(x):"]
    lines += [f"    b{i} = torch.zeros(4, 4)" for i in range(n)]
    lines += [f"    b{i}[:, 1:] = b{i}[:, 1:] ** 2 + b{j}[:, 1:] * x[:, 1:]"
              for i in range(n) for j in range(n) if i != j]
    lines.append("    return torch.argmin(b0, dim=0)")
    return "\n".join(lines) + "\n"


REAL = """

def g():
    w = torch.randn(3, requires_grad=True)
    y = w.exp()
    y.add_(1)
    return y.sum()
"""


class _TooMany(Exception):
    pass


@pytest.fixture
def counted(monkeypatch) -> Counter[str]:
    """Calls of the two searches' recursive steps, stopping a run that makes more than ``_CAP``."""
    calls: Counter[str] = collections.Counter()

    def wrap(cls: type, name: str) -> None:
        step: Callable = getattr(cls, name)

        def counting(self, *args, **kwargs):
            calls[name] += 1
            if calls[name] > _CAP:
                raise _TooMany(f"{name}: over {_CAP} calls")
            return step(self, *args, **kwargs)

        monkeypatch.setattr(cls, name, counting)

    wrap(GradRequirement, "_rg")
    wrap(Producers, "_never_backpropagated")
    return calls


@pytest.mark.parametrize("n", [5, 6, 7, 8])
def test_buffers_written_from_each_other_cost_bounded_steps(counted, n):
    result = check_source(buffers(n).encode(), "buffers.py", Settings(select=("ALL",)))
    assert counted["_never_backpropagated"] <= 1_000, dict(counted)
    assert counted["_rg"] <= 300_000, dict(counted)  # (a few questions, each at most GradRequirement.BUDGET steps)
    assert not [f for f in result.findings if f.code.startswith("IPF1")], "a proven hazard nothing runs backward through"


def test_within_the_budget_the_writes_are_shown_unreached(counted):
    """Six buffers fit the budget: the writes are shown to reach no backward (candidates only, no hazard,
    as before stop 56, which took a minute for it)."""
    source = buffers(6)
    result = check_source(source.encode(), "buffers.py", Settings(select=("ALL",)))
    assert len(result.findings) == 30 and all(f.code.startswith("IPF0") for f in result.findings)
    model = SemanticModel(Source(source.encode()))
    assert not model.budget_spent()


def test_past_the_budget_nothing_is_proven(counted):
    """Eight buffers run the searches out of budget: their writes are possible hazards at most, and so is
    a real hazard the module shows after them (``g``: ``exp`` saved its output, ``add_`` writes into it)."""
    alone = check_source(("import torch\n" + REAL).encode(), "real.py", Settings())
    assert [f.code for f in alone.findings] == ["IPF103"], "the control is proven on its own"
    both = check_source((buffers(8) + REAL).encode(), "both.py", Settings(select=("ALL",)))
    assert both.findings, "the candidates are still reported"
    assert not [f for f in both.findings if f.code.startswith("IPF1")]
    g_line = (buffers(8) + REAL).splitlines().index("    y.add_(1)") + 1
    assert [f.code for f in both.findings if f.span.line == g_line] == ["IPF203"]


def test_the_real_hazard_raises_and_the_buffers_do_not():
    """What the tests above claim, run: ``g``'s write breaks its backward; the buffers' function has no
    backward at all (``argmin`` is an integer tensor), so none of its writes can break one."""
    scope: dict = {"torch": torch}
    exec(compile(REAL, "real.py", "exec"), scope)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        scope["g"]().backward()
    exec(compile(buffers(8), "buffers.py", "exec"), scope)
    out = scope["f"](torch.randn(4, 4, requires_grad=True))
    assert not out.requires_grad and out.dtype == torch.int64


def test_an_answer_is_kept_for_the_set_asked(monkeypatch):
    """``UnreachedSearch.ask`` works an answer out once per (write, name, bindings asked), drops the answers
    of an outermost question that ran out of budget, and answers at once for that function from then on."""
    search = UnreachedSearch()
    owner, other = object(), object()
    worked: list = []

    def answer(value: bool) -> Callable[[], bool]:
        def work() -> bool:
            worked.append(value)
            return value
        return work

    assert search.ask(owner, 1, "b", [10], answer(True)) is True
    assert search.asked == set()  # the outermost question done: nothing asked any more
    assert search.ask(owner, 1, "b", [10], answer(False)) is True  # kept: not worked out again
    assert worked == [True]

    def nested() -> bool:
        first = search.ask(owner, 2, "c", [11], answer(True))
        again = search.ask(owner, 2, "c", [11], answer(False))  # the same set asked ({12}): kept
        return first and again

    assert search.ask(owner, 3, "d", [12], nested) is True
    assert search.ask(owner, 2, "c", [11], answer(False)) is False  # another set asked (none): worked out
    assert worked == [True, True, False]
    assert not search.exhausted

    monkeypatch.setattr(UnreachedSearch, "BUDGET", 2)

    def deep() -> bool:
        return search.ask(other, 5, "f", [21], lambda: search.ask(other, 6, "g", [22], answer(True)))

    assert search.ask(other, 4, "e", [20], deep) is False  # three answers to work out: past the budget
    assert search.exhausted == {other}
    assert not [k for k in search.known if k[0] in (4, 5, 6)], "the answers of a question out of budget are dropped"
    assert search.ask(other, 7, "h", [23], answer(True)) is False and len(worked) == 3  # at once, nothing worked
