"""Stop 52 (prec52), yolov5 7.0.14 ``utils/general.py:956``: non_max_suppression's merge write sits under
``if merge and (1 < n < 3E3):`` where ``merge = False`` is a local assigned once to a literal: the arm
never runs, so its write is no proof. The same holds for ``if False:`` and for the ``else`` of a test
that is surely true (``not merge``). The write stays proven where the arm may run: the local True,
bound again to a value that is no literal, or a parameter (a caller may pass True)."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import proven, raises_inplace, run_program  # noqa: E402

NMS = '''\
import torch


def nms(prediction):
    merge = False
    output = []
    for x in prediction:
        conf, j = x[:, 5:].max(1, keepdim=True)
        x = torch.cat((x[:, :4], x[:, 4:5], j.float()), 1)
        n = x.shape[0]
        boxes, scores = x[:, :4], x[:, 4]
        i = scores.argsort()
        if merge and 1 < n < 3000.0:
            weights = (boxes[i].sum(1, keepdim=True) > 0.5) * scores[None]
            x[i, :4] = torch.mm(weights, x[:, :4]).float() / weights.sum(1, keepdim=True)  # MARK
        output.append(x[i])
    return output


def other(x):
    y = torch.sigmoid(x)
    if False:
        y.mul_(2)  # MARK
    if not DEBUG:
        pass
    return y


def main():
    p = torch.cat((torch.randn(1, 6, 4), torch.rand(1, 6, 1) * 0.5 + 0.5, torch.rand(1, 6, 3)), 2).requires_grad_()
    nms(p)[0].sum().backward()
    other(torch.randn(3, requires_grad=True)).sum().backward()
    return p.grad


DEBUG = False
'''
ELSE_ARM = NMS.replace("        if merge and 1 < n < 3000.0:\n", "        if not merge:\n            pass\n        else:\n")
# the arm may run: raises, stays proven
LIVE = NMS.replace("merge = False", "merge = True")
REBOUND = NMS.replace("        i = scores.argsort()\n", "        i = scores.argsort()\n        merge = n > 1\n")
PARAMETER = NMS.replace("def nms(prediction):\n    merge = False\n", "def nms(prediction, merge=False):\n").replace(
    "nms(p)[0]", "nms(p, True)[0]")


def _lines(source: str, mark: str) -> set:
    return {i for i, line in enumerate(source.splitlines(), 1) if line.endswith(mark)}


def _proven_lines(source: str) -> set:
    return {line for _, line in proven(source)}


@pytest.mark.parametrize("source", [NMS, ELSE_ARM], ids=["and-false", "else-of-true"])
def test_a_write_on_an_arm_that_never_runs_is_not_proven(source):
    assert run_program(source) is not None
    assert not _lines(source, "# MARK") & _proven_lines(source)


@pytest.mark.parametrize("source", [LIVE, REBOUND, PARAMETER], ids=["true", "rebound", "parameter"])
def test_an_arm_that_may_run_stays_proven(source):
    assert raises_inplace(source)
    marks = {line for line in _lines(source, "# MARK") if "x[i, :4]" in source.splitlines()[line - 1]}
    assert marks and marks <= _proven_lines(source)
