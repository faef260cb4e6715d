"""An in-place method on a new tensor made with ``requires_grad=True`` (issue 24, stop 57).

ART's over-the-air flickering attack (dev set27/2707) draws its perturbation with
``torch.zeros(n, 3, 1, 1, requires_grad=True).normal_(mean=0.0, std=0.2)``: the factory makes a
leaf that requires grad, and the in-place draw into it raises at once, with grad on, "a leaf
Variable that requires grad is being used in an in-place operation" (whatever becomes of the
result). The rule skipped every in-place method whose receiver is a factory's call (a new tensor
nobody else sees: harmless), the one kind of new tensor where it is not. Bound to a name first
(``x = torch.zeros(..., requires_grad=True)``, ``x.normal_()``) the same write was already proven.

A factory without ``requires_grad=True`` (or with ``requires_grad=False``, or a flag the analysis
cannot read) stays harmless, as does the write with grad off. Every program is run with torch.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import proven_lines, raises_proven, runs_unproven  # noqa: E402

_LEAF = "a leaf Variable that requires grad is being used in an in-place operation"

_PROGRAM = """import torch


def make(n):
{body}


def main():
    torch.manual_seed(0)
    delta = make(4)
    loss = (delta * 3).sum()
    loss.backward()
    return delta.grad
"""


def _program(body: str) -> str:
    return _PROGRAM.format(body=body)


@pytest.mark.parametrize("body", [
    "    return torch.zeros(n, 3, requires_grad=True).normal_(mean=0.0, std=0.2)  # MARK",
    "    d = torch.empty(n, 3, requires_grad=True).uniform_(-1, 1)  # MARK\n    return d",
    "    d = torch.nn.Parameter(torch.zeros(n, 3, requires_grad=True).normal_(0, 0.2))  # MARK\n    return d",
    "    return torch.ones(n, 3, dtype=torch.float32, requires_grad=True).mul_(2).add_(1)  # MARK",
    "    return torch.randn(n, 3, requires_grad=True).clamp_(-1, 1)  # MARK",
], ids=["return", "assign", "parameter", "chain", "randn"])
def test_an_in_place_method_on_a_new_leaf_that_requires_grad_is_proven(body):
    raises_proven(_program(body), message=_LEAF)


@pytest.mark.parametrize("body", [
    "    return torch.zeros(n, 3).normal_(mean=0.0, std=0.2).requires_grad_()  # MARK",
    "    return torch.zeros(n, 3, requires_grad=False).normal_(0, 0.2).requires_grad_()  # MARK",
    "    with torch.no_grad():\n        d = torch.zeros(n, 3, requires_grad=True).normal_(0, 0.2)  # MARK\n    return d",
    "    flag = n > 100\n    return torch.zeros(n, 3, requires_grad=flag).normal_(0, 0.2).requires_grad_()  # MARK",
], ids=["no-flag", "false", "no-grad", "unread-flag"])
def test_a_new_tensor_that_requires_no_grad_or_grad_off_stays_unproven(body):
    runs_unproven(_program(body))


def test_the_named_form_was_proven_before():
    # the same write through a name: what the chained form must now read as
    source = _program("    d = torch.zeros(n, 3, requires_grad=True)\n    d.normal_(0, 0.2)  # MARK\n    return d")
    raises_proven(source, message=_LEAF)
    assert proven_lines(source)
