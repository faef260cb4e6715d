"""Speed work (issue 27) that must change no result: ``dtype.other_dtype`` in one walk of the
indexed tree, and the garbage collector held back while a file is worked on."""

from __future__ import annotations

import gc

import pytest

from codemod.analysis.dtype import other_dtype
from codemod.analysis.source import Source
from codemod.frontends.workers import each_until_stopped

CASES = [
    # the first in ast.walk's (breadth-first) order, not the first line
    "def f(x):\n    return x.half()\ny = torch.float64\n",
    '"""A docstring that says float16."""\nx = 1\n',
    '"""Doc."""\nmode = "bf16"\n',
    "sd = torch.load(p)\nm.load_state_dict(torch.load(q))\n",
    "m.load_state_dict(torch.load(q))\n",
    "import numpy as np\nt = torch.tensor(np.zeros(3))\n",
    "import numpy as np\nt = torch.tensor([1.0, 2.0])\n",
    "x = y.to(torch.float32)\nz = w.to(dtype)\n",
    "x = y.int()\nn = np.int(3)\n",
    "from torch import bfloat16 as b\n",
    "t = torch.zeros(3, dtype=torch.long)\nu = torch.ones(2, dtype=torch.int32)\n",
    "x = torch.int\n",
    "x = a + b\n",
]


@pytest.mark.parametrize("code", CASES)
def test_other_dtype_walks_the_indexed_tree_in_ast_walks_order(code):
    source = Source(code.encode())
    assert other_dtype(source.tree, source.children) == other_dtype(source.tree)


def test_other_dtype_reports_the_shallowest_first():
    source = Source(CASES[0].encode())
    assert other_dtype(source.tree, source.children) == "`.float64` at line 3"


def test_the_collector_waits_while_a_file_is_worked_on():
    seen = []
    assert gc.isenabled()
    assert list(each_until_stopped(lambda f: seen.append(gc.isenabled()) or f, ["a", "b"])) == ["a", "b"]
    assert seen == [False, False] and gc.isenabled()


def test_the_collector_comes_back_after_a_failure_and_stays_off_if_it_was():
    def boom(_):
        raise ValueError("x")
    with pytest.raises(ValueError):
        list(each_until_stopped(boom, ["a"]))
    assert gc.isenabled()
    gc.disable()
    try:
        list(each_until_stopped(lambda f: f, ["a"]))
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_workers_hold_the_collector_back_too():
    from codemod.frontends.workers import work_on

    assert work_on(lambda f: gc.isenabled(), ["a", "b"]) == [False, False]
    assert gc.isenabled()
