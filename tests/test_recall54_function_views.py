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


def _with_mark(name: str, body: str) -> str:
    source = HEAD + body
    if name.startswith("caller-"):
        lines = source.splitlines()
        lines[_SET_DIAG_WRITE - 1] += "  # MARK"
        source = "\n".join(lines) + "\n"
    return source


@pytest.mark.parametrize("name", sorted(RAISING))
def test_function_view_saved_inline_is_proven(name):
    raises_proven(_with_mark(name, RAISING[name]))


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_function_view_not_saved_stays_unproven(name):
    runs_unproven(_with_mark(name, CONTROLS[name]))
