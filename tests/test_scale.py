"""The analysis is linear in a module's functions and findings.

Timed tests depend on the machine; this one counts the Python lines the analysis executes (a
property of the code alone, the same on every CPU) for a generated module of N and 2N functions,
each with one finding. A quadratic step (a scan of the module's body for every statement asked
about) doubles its share with each doubling. `bench/scale.py` gives the times (1k-16k functions).
"""

from __future__ import annotations

import dataclasses
import sys

from codemod.config import Settings
from codemod.engine.pipeline import process_source

FUNCTION = '''
def step_{i}(x):
    w = torch.ones(3, requires_grad=True)
    h = torch.sigmoid(w * x)
    h += {i}
    return h.sum()
'''


def _lines_for(text: bytes) -> int:
    """The Python lines the analysis executes for ``text`` (imports and one-time tables done first)."""
    settings = dataclasses.replace(Settings(), select=("ALL",))
    process_source(text, "warm.py", settings, fix=False)
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        process_source(text, "gen.py", settings, fix=False)
    finally:
        sys.settrace(None)
    return count


def _lines_executed(n: int) -> int:
    text = ("import torch\n" + "".join(FUNCTION.format(i=i) for i in range(n))).encode()
    result = process_source(text, "gen.py", dataclasses.replace(Settings(), select=("ALL",)), fix=False)
    assert len(result.findings) == n
    return _lines_for(text)


def test_check_work_grows_linearly_with_the_functions():
    small, large = _lines_executed(150), _lines_executed(300)
    assert large / small <= 2.1, (small, large)


LEAF_FUNCTION = '''
def g_{i}(x):
    return x * 2


def step_{i}(x):
    y = g_{i}(x)
    y.add_(1)
    return y
'''


def test_check_work_grows_linearly_with_calls_of_module_functions():
    """``y = g(x)`` asks whether ``g`` returns a leaf: one look at the module's functions, not a
    walk of the whole module per binding (that was quadratic: 20 s at 1,200 functions)."""
    def lines(n: int) -> int:
        return _lines_for(("import torch\n" + "".join(LEAF_FUNCTION.format(i=i) for i in range(n))).encode())

    small, large = lines(100), lines(200)
    assert large / small <= 2.1, (small, large)


def _nested_classes(depth: int, fan: int) -> bytes:
    """``depth`` module classes with no parameters, each holding ``fan`` of the next."""
    out = ["import torch\nimport torch.nn as nn\n"]
    for level in range(depth):
        inner = f"Block{level + 1}" if level + 1 < depth else None
        held = "".join(f"        self.m{j} = {inner}()\n" for j in range(fan)) if inner else "        pass\n"
        out.append(f"\n\nclass Block{level}(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                   f"{held}\n    def forward(self, x):\n        y = x.exp()\n        y.add_(1)\n        return y\n")
    return "".join(out).encode()


def test_check_work_is_not_exponential_in_nested_module_classes():
    """Whether a class owns parameters is answered once per class, not once per path through
    the classes it holds (review32: 28.7 s for nine levels of six)."""
    def lines(fan: int) -> int:
        return _lines_for(_nested_classes(7, fan))

    small, large = lines(2), lines(3)
    assert large / small <= 2.0, (small, large)
