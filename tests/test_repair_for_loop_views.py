"""``repair`` of a write into the rows of a tensor iterated by a ``for`` statement (error family
C: iterating a tensor hands out ``unbind`` views, "Output 0 of Select is a view ... returns multiple
views"). Found at stop 52 (dev case set14/725, GPT2-chitchat#57: ``for next_token_logit in
next_token_logits: next_token_logit[unk] = -inf`` on a model's logits).

The ordinary views ``tuple(x[i] for i in range(len(x)))`` were built for a tensor iterated in a call
(``zip(img[0], means)``) or a comprehension, never for a ``for`` statement: CPython (3.11) gives the
loop's ``GET_ITER``, where the tensor is iterated, the positions of the whole statement, and no
expression spans that. The loop's iterable is taken there. Where the static rule does not see a tensor
(the logits come out of a module's tuple), the run's candidate is the only one. The look-alike: an
iterable that is a call (``head(x)[0]``) is not read twice (that would run the model again).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.repair import render, repair  # noqa: E402

MASK = '''\
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 5)

    def forward(self, x):
        return (self.lin(x),)


def compute():
    torch.manual_seed(0)
    head = Head()
    x = torch.randn(3, 4)
    scores = head(x)[0][:, 1:]
    for row in scores:
        row[0] = -1e4
    loss = torch.log_softmax(scores, -1).sum()
    loss.backward()
    return {"loss": loss.detach(), "w": head.lin.weight.grad, "b": head.lin.bias.grad}
'''
FIXED = MASK.replace("    for row in scores:\n", "    for row in tuple(scores[i] for i in range(len(scores))):\n")
# hand-written reference: the same writes by index
HAND = MASK.replace("    for row in scores:\n        row[0] = -1e4\n",
                    "    for i in range(scores.shape[0]):\n        scores[i, 0] = -1e4\n")
CALL = MASK.replace("    scores = head(x)[0][:, 1:]\n    for row in scores:\n",
                    "    for row in head(x)[0]:\n").replace("torch.log_softmax(scores, -1)", "torch.log_softmax(head(x)[0], -1)")


def _run(text):
    namespace = {}
    exec(compile(text, "<case>", "exec"), namespace)
    return namespace["compute"]()


def test_the_program_raises_and_the_fix_equals_the_hand_reference():
    with pytest.raises(RuntimeError, match="returns multiple views"):
        _run(MASK)
    want, got = _run(HAND), _run(FIXED)
    assert all(torch.equal(want[k], got[k]) for k in want)


def test_rows_of_a_tensor_iterated_by_a_for_statement_become_ordinary_views(tmp_path):
    path = tmp_path / "mask.py"
    path.write_text(MASK)
    result = repair(f"{path}::compute", devices=["cpu"])
    assert result.verified, render(result)
    assert result.repaired == FIXED, result.repaired
    want, got = _run(HAND), _run(result.repaired)
    assert all(torch.equal(want[k], got[k]) for k in want)


def test_an_iterable_that_is_a_call_is_not_read_twice(tmp_path):
    with pytest.raises(RuntimeError, match="returns multiple views"):
        _run(CALL)
    path = tmp_path / "call.py"
    path.write_text(CALL)
    result = repair(f"{path}::compute", devices=["cpu"])
    assert "head(x)[0][i]" not in result.repaired and "len(head(x)" not in result.repaired, result.repaired
