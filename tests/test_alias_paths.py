"""A parameter rebound on one path only is still the caller's tensor on the others: a write
into it there mutates the caller's tensor, and the safe tier must not copy it away (review31).
``_on_every_path`` took an ``if``'s whole range (both branches) for the binding's path."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.engine.pipeline import fix_source  # noqa: E402
from codemod.testing import SAFE  # noqa: E402

ELSE = """
import torch


def scale(x: torch.Tensor, copy: bool) -> torch.Tensor:
    if copy:
        x = x.clone()
    else:
        x.mul_(2)
    return x
"""

ELIF = """
import torch


def scale(x: torch.Tensor, copy: bool) -> torch.Tensor:
    if copy:
        x = x.clone()
    elif x.numel() > 1:
        x[0] = 7.0
    return x
"""

EXCEPT = """
import torch


def scale(x: torch.Tensor, copy: bool) -> torch.Tensor:
    try:
        if not copy:
            raise ValueError
        x = x.clone()
    except ValueError:
        x[0] = 7.0
    return x
"""

IFEXP = """
import torch


def scale(x: torch.Tensor, copy: bool) -> torch.Tensor:
    x = x.clone() if copy else x
    x.mul_(2)
    return x
"""

IFEXP_FIRST = """
import torch


def scale(x: torch.Tensor, copy: bool) -> torch.Tensor:
    x = x if not copy else x.clone()
    x[0] = 3.0
    return x
"""

SECOND_BRANCH = """
import torch


def scale(x: torch.Tensor, copy: bool) -> torch.Tensor:
    a = x * 2
    b = x * 3
    y = a if copy else b
    y.mul_(2)
    return b
"""

ALIAS = """
import torch


def scale(x: torch.Tensor, copy: bool) -> torch.Tensor:
    y = x
    if copy:
        y = x.clone()
    y[0] = 5.0
    return y
"""


def caller_tensor_after(source: str) -> torch.Tensor:
    scope: dict = {}
    exec(compile(source, "m.py", "exec"), scope)
    a = torch.ones(3)
    scope["scale"](a, False)
    return a


@pytest.mark.parametrize("source", [ELSE, ELIF, EXCEPT, IFEXP, IFEXP_FIRST],
                         ids=["else", "elif", "except", "ifexp", "ifexp-first"])
def test_a_write_on_the_path_without_the_copy_is_not_copied_by_the_safe_tier(source):
    fixed = fix_source(source.encode(), "m.py", SAFE).fixed or source
    assert torch.equal(caller_tensor_after(fixed), caller_tensor_after(source))


def test_an_alias_of_the_parameter_rebound_on_one_path_is_not_copied_by_the_safe_tier():
    fixed = fix_source(ALIAS.encode(), "m.py", SAFE).fixed or ALIAS
    assert torch.equal(caller_tensor_after(fixed), caller_tensor_after(ALIAS))


def test_a_write_through_the_second_branch_of_a_conditional_reaches_that_tensor():
    """``y = a if c else b``: on the path through ``else`` the write into ``y`` is a write into
    ``b``, which is read after; a safe rewrite of it must not hide the write from ``b``."""
    scope: dict = {}
    fixed = fix_source(SECOND_BRANCH.encode(), "m.py", SAFE).fixed or SECOND_BRANCH
    exec(compile(fixed, "m.py", "exec"), scope)
    before: dict = {}
    exec(compile(SECOND_BRANCH, "m.py", "exec"), before)
    x = torch.ones(3)
    assert torch.equal(scope["scale"](x, False), before["scale"](x, False))
