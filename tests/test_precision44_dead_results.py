"""A saved value counts only where a backward can reach it (issue 24, precision): ``z = w * b``
with ``z`` never read, or ``w * b`` as a statement of its own, keeps no graph anyone can run
backward through, so ``b += 1`` afterwards trips nothing (proven IPF101 on main). Each program is
run with torch; the look-alikes (the product read by a backward, appended to a list, returned to
the caller) stay proven."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.config import Settings  # noqa: E402
from tests.programs import process_in_project  # noqa: E402

TEMPLATE = '''\
import torch


def example():
    w = torch.randn(3, requires_grad=True)
    b = torch.ones(3)
    keep = []
    {save}
    b += 1
    {after}
    loss = (w * 2.0).sum()
    loss.backward()
    return {returned}
'''

DEAD = [
    dict(save="z = w * b", after="pass", returned="w.grad"),
    dict(save="w * b", after="pass", returned="w.grad"),
    dict(save="z = torch.sigmoid(w * b).sum()", after="pass", returned="w.grad"),
    dict(save="z = (w * b).detach()", after="print(z)", returned="w.grad"),
]
LIVE = [
    dict(save="z = w * b", after="z.sum().backward()", returned="w.grad"),
    dict(save="keep.append(w * b)", after="keep[0].sum().backward()", returned="w.grad"),
    dict(save="z = torch.sigmoid(w * b).sum()", after="z.backward()", returned="w.grad"),
]


def _proven(source: str):
    result = process_in_project(source, Settings())
    return [(f.code, f.span.line) for f in result.findings if f.code.startswith("IPF1")]


def _raises(source: str) -> bool:
    namespace: dict = {}
    exec(source, namespace)
    try:
        namespace["example"]()
    except RuntimeError as error:
        assert "modified by an inplace operation" in str(error), error
        return True
    return False


@pytest.mark.parametrize("parts", DEAD, ids=[d["save"] + " / " + d["after"] for d in DEAD])
def test_a_save_no_backward_can_reach_is_not_proven(parts):
    source = TEMPLATE.format(**parts)
    assert not _raises(source)
    assert _proven(source) == []


@pytest.mark.parametrize("parts", LIVE, ids=[d["save"] + " / " + d["after"] for d in LIVE])
def test_a_save_a_backward_reaches_stays_proven(parts):
    source = TEMPLATE.format(**parts)
    assert _raises(source)
    assert _proven(source) == [("IPF101", 9)]


def test_an_inplace_op_of_its_own_statement_keeps_its_result():
    # `h.sigmoid_()` alone: its result is `h`, which the name still holds (tests/test_hazard.py's form)
    source = """\
import torch


def example():
    w = torch.randn(3, requires_grad=True)
    h = w * 1.0
    h.sigmoid_()
    h += 1
    h.sum().backward()
    return w.grad
"""
    assert _raises(source)
    assert _proven(source) == [("IPF101", 8)]


def test_a_product_returned_to_the_caller_stays_proven():
    source = TEMPLATE.format(save="z = w * b", after="pass", returned="z")
    assert _proven(source) == [("IPF101", 9)]
