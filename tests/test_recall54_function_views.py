"""A torch function that always makes a view of its first argument (``torch.diagonal(x, ...)``,
``torch.transpose(x, 0, 1)``, ``torch.narrow``...), written inline as an op's operand: the op
saves that view of ``x``, which shares ``x``'s version counter, so a later write into ``x`` trips
backward. The method forms (``x.diagonal()``) and a view bound to a name were followed; the
function form inline was "a call the analysis cannot see into" (geomstats' PyTorch backend,
set26/2608: ``set_diag(v, maximum(0., diagonal(v, axis1=1, axis2=2)))``).

Each look-alike that raises is run with torch; each control runs backward and stays unproven:
ops that save nothing of their input (``sum``, ``exp`` saves its output), and ``torch.reshape``
(a copy of a non-contiguous tensor: not followed).
"""

from __future__ import annotations

import pytest

from tests.programs import raises_proven, runs_unproven

HEAD = """import torch


def set_diag(x, new_diag):
    n = x.shape[-1]
    x[..., range(n), range(n)] = new_diag

"""

RAISING = {
    "diagonal-max-then-write": """
def main():
    w = torch.randn(2, 3, 3, requires_grad=True)
    v = 0.5 * (torch.eye(3) + w)
    m = torch.max(torch.tensor(0.), torch.diagonal(v, dim1=1, dim2=2))
    v[..., 0, 0] = 1.0  # MARK
    (m.sum() + v.sum()).backward()
""",
    "transpose-sin-then-iadd": """
def main():
    w = torch.randn(3, 4, requires_grad=True)
    v = w * 2
    s = torch.sin(torch.transpose(v, 0, 1))
    v += 1  # MARK
    (s.sum() + v.sum()).backward()
""",
    "narrow-in-mul-then-mul_": """
def main():
    w = torch.randn(4, 4, requires_grad=True)
    v = w + 1
    s = torch.narrow(v, 0, 0, 2) * w[:2]
    v.mul_(3)  # MARK
    (s.sum() + v.sum()).backward()
""",
    "caller-passes-diagonal-saved-in-the-argument": """
def main():
    w = torch.randn(2, 3, 3, requires_grad=True)
    v = 0.5 * (torch.eye(3) + w)
    set_diag(v, torch.max(torch.tensor(0.), torch.diagonal(v, dim1=1, dim2=2)))
    v.sum().backward()
""",
}

# The write inside set_diag is the marked line of the caller-side look-alike.
_SET_DIAG_WRITE = HEAD.splitlines().index("    x[..., range(n), range(n)] = new_diag") + 1

CONTROLS = {
    "diagonal-summed-then-write": """
def main():
    w = torch.randn(2, 3, 3, requires_grad=True)
    v = 0.5 * (torch.eye(3) + w)
    m = torch.diagonal(v, dim1=1, dim2=2).sum()
    v[..., 0, 0] = 1.0  # MARK
    (m + v.sum()).backward()
""",
    "transpose-exp-then-iadd": """
def main():
    w = torch.randn(3, 4, requires_grad=True)
    v = w * 2
    s = torch.exp(torch.transpose(v, 0, 1))
    v += 1  # MARK
    (s.sum() + v.sum()).backward()
""",
    "reshape-of-transpose-copies": """
def main():
    w = torch.randn(3, 4, requires_grad=True)
    v = (w * 2).t()
    s = torch.sin(torch.reshape(v, (-1,)))
    v += 1  # MARK
    (s.sum() + v.sum()).backward()
""",
    "caller-passes-diagonal-summed": """
def main():
    w = torch.randn(2, 3, 3, requires_grad=True)
    v = 0.5 * (torch.eye(3) + w)
    set_diag(v, torch.diagonal(v, dim1=1, dim2=2).sum(-1, keepdim=True) * 0)
    v.sum().backward()
""",
}


def _marked_at(head: str, body: str, line: int | None) -> str:
    """``head + body`` with ``# MARK`` on ``line`` (of ``head``), where the case proves a line there."""
    source = head + body
    if line is not None:
        lines = source.splitlines()
        lines[line - 1] += "  # MARK"
        source = "\n".join(lines) + "\n"
    return source


def _with_mark(name: str, body: str) -> str:
    return _marked_at(HEAD, body, _SET_DIAG_WRITE if name.startswith("caller-") else None)


@pytest.mark.parametrize("name", sorted(RAISING))
def test_function_view_saved_inline_is_proven(name):
    raises_proven(_with_mark(name, RAISING[name]))


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_function_view_not_saved_stays_unproven(name):
    runs_unproven(_with_mark(name, CONTROLS[name]))


# Helpers of the file (geomstats' backend shape): `diagonal` returns a function-form view of its
# argument, `array` hands a tensor back as it came (`x if torch.is_tensor(x) else torch.tensor(x)`),
# `maximum` saves both of what it is given. A view helper called inline in an op's operand reads
# the caller's tensor as the function form does; an op on `array(a)` saves `a`.
HELPERS = """import torch


def array(x):
    return x if torch.is_tensor(x) else torch.tensor(x)


def maximum(a, b):
    return torch.max(array(a), array(b))


def plus(a, b):
    return torch.add(array(a), array(b))


def copied(x):
    return x.clone() if torch.is_tensor(x) else torch.tensor(x)


def diagonal(x, offset=0, axis1=0, axis2=1):
    return torch.diagonal(x, offset=offset, dim1=axis1, dim2=axis2)


def swapped(x):
    return x.transpose(0, 1)


def flat(x):
    return x.reshape(-1)


def set_diag(x, new_diag):
    n = x.shape[-1]
    x[..., range(n), range(n)] = new_diag

"""

HELPER_RAISING = {
    "set-diag-of-maximum-of-diagonal (set26/2608)": """
def main():
    w = torch.randn(2, 3, 3, requires_grad=True)
    v = 0.5 * (torch.eye(3) + w)
    set_diag(v, maximum(0., diagonal(v, axis1=1, axis2=2)))
    v.sum().backward()
""",
    "maximum-of-a-number-and-a-view": """
def main():
    w = torch.randn(2, 3, 3, requires_grad=True)
    v = 0.5 * (torch.eye(3) + w)
    d = v.diagonal(dim1=1, dim2=2)
    m = maximum(0., d)
    v[..., 0, 0] = 1.0  # MARK
    (m.sum() + v.sum()).backward()
""",
    "sin-of-a-helper-transpose": """
def main():
    w = torch.randn(3, 4, requires_grad=True)
    v = w * 2
    s = torch.sin(swapped(v))
    v += 1  # MARK
    (s.sum() + v.sum()).backward()
""",
}

HELPER_CONTROLS = {
    "sin-of-a-helper-reshape-that-copies": """
def main():
    w = torch.randn(3, 4, requires_grad=True)
    v = (w * 2).t()
    s = torch.sin(flat(v))
    v += 1  # MARK
    (s.sum() + v.sum()).backward()
""",
    "plus-saves-nothing": """
def main():
    w = torch.randn(2, 3, 3, requires_grad=True)
    v = 0.5 * (torch.eye(3) + w)
    m = plus(0., v.diagonal(dim1=1, dim2=2))
    v[..., 0, 0] = 1.0  # MARK
    (m.sum() + v.sum()).backward()
""",
    "sin-of-a-helper-copy": """
def main():
    w = torch.randn(3, 4, requires_grad=True)
    v = w * 2
    s = torch.sin(copied(v))
    v += 1  # MARK
    (s.sum() + v.sum()).backward()
""",
}

_HELPER_SET_DIAG_WRITE = HELPERS.splitlines().index("    x[..., range(n), range(n)] = new_diag") + 1


def _helpers_with_mark(name: str, body: str) -> str:
    return _marked_at(HELPERS, body, _HELPER_SET_DIAG_WRITE if name.startswith("set-diag") else None)


@pytest.mark.parametrize("name", sorted(HELPER_RAISING))
def test_helper_view_or_passthrough_saved_is_proven(name):
    raises_proven(_helpers_with_mark(name, HELPER_RAISING[name]))


@pytest.mark.parametrize("name", sorted(HELPER_CONTROLS))
def test_helper_copy_or_no_save_stays_unproven(name):
    runs_unproven(_helpers_with_mark(name, HELPER_CONTROLS[name]))
