"""Stop 57 (safe57): an alias a rebinding fix rebinds must still be one at the write.

`d *= 5` where `d = h` is rewritten `d = h = d * 5` (safe tier): the write reached `h` too, so
the rebinding must. That holds only where `h` still names the tensor `d` was bound from. It did
not where `h` is rebound after `d = h` (`d = h; h = relu(...)`, in a straight line or in a loop),
nor in a loop where `acc = c` runs on one turn and `acc += c` on the next (`c` is then another
turn's tensor: mmocr's FPEM_FFM shape, `if i == 0: c2_ffm = c2` / `else: c2_ffm += c2`). There
`d = h = d * 5` gave `h` the wrong values: a safe fix computing something else than the program
and the maintainers' `d = d * 5` (measured below). Such a write gets no rebinding fix in any tier
(`alias`, manual); the plain alias still gets its safe one.
"""

from __future__ import annotations

import pytest
import torch

from codemod.config import Settings
from tests.programs import fixed_source, process_in_project

HEADER = "import torch\n\n\n"

REBOUND = {
    "rebound-after-in-a-straight-line": ("""\
def f(x, w):
    h = torch.relu(x * w)
    d = h
    h = torch.relu(x * w * 2)
    d *= 5
    return d + h
""", "    d *= 5\n", "    d = d * 5\n"),
    "rebound-in-a-loop-after": ("""\
def f(x, w):
    h = torch.relu(x * w)
    d = h
    for i in range(2):
        h = torch.relu(x * w * i)
        d *= 5
    return d + h
""", "        d *= 5\n", "        d = d * 5\n"),
    "bound-on-another-turn": ("""\
def f(x, w):
    c = torch.relu(x * w)
    for i in range(3):
        c = torch.relu(c * w)
        if i == 0:
            acc = c
        else:
            acc += c
    return acc + c
""", "            acc += c\n", "            acc = acc + c\n"),
}


def _run(source: str) -> torch.Tensor:
    space: dict = {}
    exec(compile(source, "case.py", "exec"), space)
    torch.manual_seed(0)
    x, w = torch.rand(4), torch.rand(4) + 1
    with torch.no_grad():  # (the forward values: the write raises at backward, not here)
        return space["f"](x, w)


def _statuses(source: str, write: str) -> list:
    line = source.splitlines().index(write.rstrip("\n")) + 1
    return [(f.status.value if f.status else None, f.reason)
            for f in process_in_project(source, Settings()).findings if f.span.line == line]


@pytest.mark.parametrize("name", sorted(REBOUND))
def test_a_name_no_longer_naming_the_tensor_is_not_rebound(name):
    body, write, plain = REBOUND[name]
    source = HEADER + body
    statuses = _statuses(source, write)
    assert statuses and all(status == "manual" for status, _ in statuses), statuses
    for settings in (Settings(), Settings(unsafe_fixes=True)):
        assert fixed_source(source, settings, project=True).count(" = ") == source.count(" = ")  # no rewrite
    # what the rebinding wrote computed something else than the program and the plain rewrite
    rebinding = write.replace(" *= 5", " = h = d * 5").replace(" += c", " = c = acc + c")
    assert rebinding != write
    want = _run(source)
    assert torch.equal(_run(source.replace(write, plain)), want)
    assert not torch.equal(_run(source.replace(write, rebinding)), want)


def test_an_alias_still_naming_the_tensor_keeps_its_safe_fix():
    """The control: `d = h` in the same turn, `h` not rebound: `d = h = d * 5` is right."""
    source = HEADER + """\
def f(x, w):
    for i in range(2):
        h = torch.relu(x * w * i)
        d = h
        d *= 5
        x = x + h
    return d + x
"""
    assert _statuses(source, "        d *= 5\n") == [("safe", None)]
    fixed = fixed_source(source, project=True)
    assert "        d = h = d * 5\n" in fixed
    assert torch.equal(_run(fixed), _run(source))
