"""A backward that consumed the graph before the write (issue 24, precision; torchattacks' EAD
attacks at stop 43: six false proven findings). ``cost = f(const); cost.backward()`` frees the
graph that saved ``const``; a later write into ``const`` (here, in a helper, after the loop)
trips nothing, and the next turn's forward saves the new value again. Written from the public
pattern (attack and optimisation loops that backward, then adjust a tensor in place), each
program run with torch: the cleared ones run, the look-alikes raise and stay proven (a write
before the backward, ``retain_graph=True`` and a second backward, a backward of another loss, a
``continue`` that skips the backward, a loss whose history is dropped)."""

from __future__ import annotations

import textwrap

import pytest

torch = pytest.importorskip("torch")

from codemod.config import Settings  # noqa: E402
from tests.programs import process_in_project  # noqa: E402


def _proven(source: str):
    result = process_in_project(source, Settings())
    return [(f.code, f.span.line) for f in result.findings if f.code.startswith("IPF1")]


def _raises(source: str) -> bool:
    namespace: dict = {}
    exec(textwrap.dedent(source), namespace)
    try:
        namespace["example"]()
    except RuntimeError as error:
        assert "modified by an inplace operation" in str(error), error
        return True
    return False


RUNS = {
    "nested-loops-adjust-after": '''\
import torch


def example():
    y = torch.nn.Parameter(torch.randn(2, 3))
    const = torch.ones(2)
    for outer in range(2):
        for step in range(3):
            output = y * 2.0
            cost = torch.sum(const * output.sum(dim=1))
            cost.backward()
            with torch.no_grad():
                y -= y.grad * 0.1
        mask = const < 5
        const[mask] = const[mask] * 10
    return y
''',
    "loop-backward-then-decay": '''\
import torch


def example():
    x = torch.randn(4, 3, requires_grad=True)
    w = torch.ones(3)
    for _ in range(3):
        loss = (x * w).sum()
        loss.backward()
        w.mul_(0.5)
    return x.grad
''',
    "helper-adjusts-after-loop": '''\
import torch


class Attack:
    def __init__(self, steps=3):
        self.steps = steps

    def loss(self, output, const):
        return torch.sum(const * output.sum(dim=1))

    def adjust(self, const, mask):
        const[mask] = const[mask] * 10

    def run(self, images):
        const = torch.ones(images.shape[0])
        y = torch.nn.Parameter(images.clone())
        for outer in range(2):
            for step in range(self.steps):
                output = y * 2.0
                cost = self.loss(output, const)
                cost.backward()
                with torch.no_grad():
                    y -= y.grad * 0.1
            mask = const < 5
            self.adjust(const, mask)
        return y


def example():
    return Attack().run(torch.randn(2, 3))
''',
    "through-a-chain-of-names": '''\
import torch


def example():
    x = torch.randn(4, 3, requires_grad=True)
    w = torch.ones(3)
    out = x * w
    loss = out.sum()
    (loss / 2).backward()
    w += 1
    return x.grad
''',
}

# The binary search of the constant after the backward (torchattacks' EAD): `const = upper` on
# one turn, so the helper's saved `const` and written `upper` may be one tensor; every argument it
# saves is a constant, so nothing shows that its torch.min saves anything (possible, not proven).
RUNS["helper-saves-an-aliased-constant-argument"] = '''\
import torch


class Search:
    def better(self, score, labels):
        return score != labels

    def adjust(self, labels, score, const, upper, lower):
        mask = self.better(score, labels) & (score != -1)
        upper[mask] = torch.min(upper[mask], const[mask])
        lower[~mask] = torch.max(lower[~mask], const[~mask])
        mask = upper < 1e9
        const[mask] = (lower[mask] + upper[mask]) / 2
        const[~mask] = const[~mask] * 10

    def run(self, x, labels):
        const = torch.ones(4)
        upper = torch.ones(4) * 1e10
        lower = torch.zeros(4)
        for step in range(2):
            if step == 1:
                const = upper
            loss = (const * x.sum(1)).sum()
            loss.backward()
            score = x.grad.sum(1).argmax().float().expand(4)
            self.adjust(labels, score, const, upper, lower)
        return const


def example():
    return Search().run(torch.randn(4, 3, requires_grad=True), torch.zeros(4))
'''

RUNS["loss-module-then-decay"] = '''\
import torch
from torch import nn


class Fitter:
    def __init__(self):
        self.crit = nn.MSELoss()

    def fit(self, x, y):
        w = torch.ones(3)
        x = x.requires_grad_()
        for _ in range(3):
            out = x * w
            loss = self.crit(out, y)
            loss.backward()
            w.mul_(0.9)
        return x.grad


def example():
    return Fitter().fit(torch.randn(4, 3), torch.randn(4, 3))
'''

RUNS["inside-torch-enable-grad"] = '''\
import torch


def example():
    x = torch.randn(4, 3, requires_grad=True)
    w = torch.ones(3)
    for _ in range(3):
        with torch.enable_grad():
            loss = (x * w).sum()
            loss.backward()
        w.mul_(0.5)
    return x.grad
'''

RAISES = {
    "write-before-backward": ('''\
import torch


def example():
    x = torch.randn(4, 3, requires_grad=True)
    w = torch.ones(3)
    for _ in range(3):
        loss = (x * w).sum()
        w.mul_(0.5)
        loss.backward()
    return x.grad
''', [("IPF103", 9)]),
    "retain-graph-then-backward-again": ('''\
import torch


def example():
    x = torch.randn(4, 3, requires_grad=True)
    w = torch.ones(3)
    loss = (x * w).sum()
    loss.backward(retain_graph=True)
    w += 1
    loss.backward()
    return x.grad
''', [("IPF101", 9)]),
    "backward-of-another-loss": ('''\
import torch


def example():
    x = torch.randn(4, 3, requires_grad=True)
    w = torch.ones(3)
    h = x * w
    other = x.sum()
    other.backward()
    w += 1
    h.sum().backward()
    return x.grad
''', [("IPF101", 10)]),
    "continue-skips-the-backward": ('''\
import torch


def example():
    x = torch.randn(4, 3, requires_grad=True)
    w = torch.ones(3)
    for i in range(2):
        loss = (x * w).sum()
        if i == 1:
            continue
        loss.backward()
    w += 1
    loss.backward()
    return x.grad
''', [("IPF101", 12)]),
    "history-dropped-from-the-loss": ('''\
import torch


def example():
    x = torch.randn(4, 3, requires_grad=True)
    w = torch.ones(3)
    h = x * w
    loss = h.sum().detach() + x.sum()
    loss.backward()
    w += 1
    h.sum().backward()
    return x.grad
''', [("IPF101", 10)]),
    "loss-module-retained-then-backward-again": ('''\
import torch
from torch import nn


class Fitter:
    def __init__(self):
        self.crit = nn.MSELoss()

    def fit(self, x, y):
        w = torch.ones(3)
        x = x.requires_grad_()
        for _ in range(3):
            out = x * w
            loss = self.crit(out, y)
            loss.backward(retain_graph=True)
            w.mul_(0.9)
            loss.backward()
        return x.grad


def example():
    return Fitter().fit(torch.randn(4, 3), torch.randn(4, 3))
''', [("IPF103", 16)]),
    "finally-runs-the-write-without-the-backward": ('''\
import torch


def step(x, w, i):
    try:
        loss = (x * w).sum()
        1 / i
        loss.backward()
    finally:
        w.mul_(0.5)
    return loss


def example():
    x = torch.randn(4, 3, requires_grad=True)
    w = torch.ones(3)
    try:
        step(x, w, 0)
    except ZeroDivisionError as error:
        error.__traceback__.tb_next.tb_frame.f_locals["loss"].backward()
    return x.grad
''', [("IPF103", 10)]),
    "helper-saves-an-aliased-argument-that-requires-grad": ('''\
import torch


class Search:
    def adjust(self, const, upper):
        upper[:2] = torch.min(upper[:2], const[:2])
        const[2:] = const[2:] * 10

    def run(self, s):
        const = torch.ones(4) * s
        upper = torch.ones(4) * 1e10
        for step in range(2):
            if step == 1:
                const = upper
            self.adjust(const, upper)
        return (const * 2).sum()


def example():
    s = torch.tensor(1.0, requires_grad=True)
    loss = Search().run(s)
    loss.backward()
    return s.grad
''', [("IPF104", 6), ("IPF104", 7)]),
}


@pytest.mark.parametrize("case", sorted(RUNS))
def test_a_write_after_the_backward_that_consumed_the_save_is_not_proven(case):
    source = RUNS[case]
    assert not _raises(source)
    assert _proven(source) == []


@pytest.mark.parametrize("case", sorted(RAISES))
def test_look_alikes_that_raise_stay_proven(case):
    source, expected = RAISES[case]
    assert _raises(source)
    assert _proven(source) == expected
