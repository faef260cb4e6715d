"""Stop 52 (prec52), funasr 1.4.16 ``data2vec/multihead_attention.py:39``: ``FairseqDropout.forward(x,
inplace: bool = False)`` runs ``F.dropout(x, ..., inplace=inplace)``; the call on softmax's output
(``self.dropout_module(attn_weights)``) passes no ``inplace``, so the default False runs it out of
place. A caller that keeps the default is no proof: where every call in view keeps it the hazard is
possible (a call out of view may pass True), where one passes ``inplace=True`` it is that call's
hazard that is proven (and that program raises). A flag the function binds again is no steady
default: the call keeping it still runs in place, raises, and stays proven."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import proven, raises_inplace, run_program  # noqa: E402

DROP = '''\
import torch
from torch import nn


class Drop(nn.Module):
    def forward(self, x, inplace: bool = False):
        return torch.nn.functional.dropout(x, p=0.5, training=True, inplace=inplace)  # MARK


class User(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = Drop()

    def forward(self, scores):
        w = torch.softmax(scores, dim=-1)
        return self.drop(w)


def main():
    s = torch.randn(2, 5, requires_grad=True)
    User()(s).sum().backward()
    return s.grad
'''
# a second caller passes inplace=True on softmax's output: raises, proven by that call
PASSED = DROP.replace("        return self.drop(w)\n", "        return self.drop(w)\n\n    def other(self, scores):\n"
                      "        w = torch.softmax(scores, dim=-1)\n        return self.drop(w, inplace=True)  # CALL\n"
                      ).replace("User()(s)", "User().other(s)")
# the flag bound again (not the default): the call leaving it out runs in place
REBOUND = DROP.replace("    def forward(self, x, inplace: bool = False):\n",
                       "    def forward(self, x, inplace: bool = False):\n        inplace = inplace or self.training\n")


def _lines(source: str, mark: str) -> set:
    return {i for i, line in enumerate(source.splitlines(), 1) if line.endswith(mark)}


def _proven(source: str) -> list:
    return proven(source)


def test_a_flag_left_at_its_default_false_is_no_proof():
    assert run_program(DROP) is not None
    assert not _lines(DROP, "# MARK") & {line for _, line in _proven(DROP)}


def test_a_caller_passing_the_flag_is_the_proof():
    from codemod.config import Settings
    from tests.programs import process_in_project

    assert raises_inplace(PASSED)
    found = [f for f in process_in_project(PASSED, Settings()).findings
             if f.code.startswith("IPF1") and f.span.line in _lines(PASSED, "# MARK")]
    assert len(found) == 1
    call = min(_lines(PASSED, "# CALL"))
    assert f"at line {call}," in found[0].message


def test_a_flag_bound_again_stays_proven():
    assert raises_inplace(REBOUND)
    assert _lines(REBOUND, "# MARK") <= {line for _, line in _proven(REBOUND)}
