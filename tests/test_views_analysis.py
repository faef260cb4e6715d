"""``analysis/views.py`` on the shapes of the view family: what is a refused view, what is a
proven error, and what is not (each a small module analysed on ``ast``)."""

from __future__ import annotations

import ast
import contextlib
import textwrap

import pytest

from codemod.analysis.model import SemanticModel
from codemod.analysis.source import Source
from codemod.config import Settings
from codemod.engine.pipeline import process_source

HEAD = "import torch\nimport torch.nn as nn\n\n"


def origin_of_write(body: str, name: str):
    """The origin the analysis gives the last in-place write to ``name`` in ``body``."""
    model = SemanticModel(Source((HEAD + textwrap.dedent(body)).encode()))
    writes = [n for n in ast.walk(model.module)
              if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and n.target.id == name
              or isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr.endswith("_")
              and isinstance(n.func.value, ast.Name) and n.func.value.id == name]
    node = max(writes, key=lambda n: n.lineno)
    target = node.target if isinstance(node, ast.AugAssign) else node.func.value
    return model, model.views.origin(target, model.statement_of(node))


def codes(body: str) -> set:
    result = process_source((HEAD + textwrap.dedent(body)).encode(), "m.py", Settings(select=("ALL",)))
    return {f.code for f in result.findings if f.code.endswith("06")}


@pytest.mark.parametrize("body, name, kind, certain", [
    ("def f(x):\n    q, k = x.chunk(2)\n    q += 1\n", "q", "multi-output", True),
    ("def f(x):\n    q, k = torch.split(x, 2)\n    q = q.transpose(0, 1).unsqueeze(0)\n    q += 1\n", "q", "multi-output", True),
    ("def f(x):\n    parts = x.unbind(0)\n    p = parts[0][1:]\n    p += 1\n", "p", "multi-output", True),
    ("def f(x: torch.Tensor):\n    for row in x:\n        row += 1\n", "row", "multi-output", True),
    ("def f(x):\n    for i, c in enumerate(x.chunk(3)):\n        c.mul_(i)\n", "c", "multi-output", True),
    ("def f(x):\n    q, k = x.chunk(2, 1)\n    q = q.reshape(-1)\n    q += 1\n", "q", "multi-output", False),
    ("def f(x: torch.Tensor):\n    with torch.no_grad():\n        v = x[0]\n    v += 1\n", "v", "no-grad", True),
])
def test_refused_views_are_found(body, name, kind, certain):
    _, origin = origin_of_write(body, name)
    assert origin is not None and origin.kind == kind and origin.certain is certain


@pytest.mark.parametrize("body, name", [
    ("def f(x):\n    q = x.chunk(2)[0].clone()\n    q += 1\n", "q"),  # a copy
    ("def f(x):\n    q = x.chunk(2)[0] * 2\n    q += 1\n", "q"),  # an out-of-place result
    ("def f():\n    y = torch.zeros(3)\n    r = y[0]\n    r += 1\n", "r"),  # a single view
    ("def f(x):\n    q = x.chunk(2)[0][[0, 1]]\n    q += 1\n", "q"),  # advanced indexing copies
    ("def f(line: str):\n    a, b = line.split(',')\n    a += 'x'\n", "a"),  # a string's split
    ("def f(x):\n    q, k = x.chunk(2)\n    q = q.detach()\n    q += 1\n", "q"),  # detach: no ban
    ("def f(x, flag):\n    q = x.chunk(2)[0] if flag else x\n    q += 1\n", "q"),  # one way in is not a view
])
def test_what_is_not_a_refused_view(body, name):
    assert origin_of_write(body, name)[1] is None


def test_requires_grad_decides_proven_or_possible():
    proven = """\
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            a, b = self.fc(x).chunk(2, -1)
            a *= 2
            return a + b
    """
    possible = "def f(h):\n    a, b = h.chunk(2)\n    a *= 2\n    return a + b\n"
    allowed = "def f():\n    buf = torch.zeros(4)\n    a, b = buf.chunk(2)\n    a += 1\n    return buf\n"
    operand = ("def f(w: torch.Tensor):\n    buf = torch.zeros(4)\n    with torch.no_grad():\n"
               "        a = buf[:2]\n    a.mul_(torch.ones(2, requires_grad=True))\n    return a\n")
    assert codes(proven) == {"IPF106"}
    assert codes(possible) == {"IPF006"}
    assert codes(allowed) == set()  # nothing requires grad: PyTorch allows it
    assert codes(operand) == {"IPF106"}  # the value written requires grad


def test_writes_with_grad_off_are_left_alone():
    body = "def f(x):\n    with torch.no_grad():\n        q, k = (x * 2).chunk(2)\n        q += 1\n    return q\n"
    assert codes(body) == set()


def test_a_custom_function_returning_its_input_makes_a_refused_view():
    body = """\
    class Same(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g


    def f(w: torch.Tensor):
        y = Same.apply(w * 2)
        y += 1
        return y
    """
    _, origin = origin_of_write(body, "y")
    assert origin is not None and origin.kind == "custom-function"


def test_the_tensor_viewed_read_later_makes_the_fix_unsafe():
    body = """\
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            h = self.fc(x)
            a, b = h.chunk(2, -1)
            a *= 2
            return a.sum() + h.sum()
    """
    result = process_source((HEAD + textwrap.dedent(body)).encode(), "m.py", Settings(select=("ALL",)))
    [finding] = [f for f in result.findings if f.code == "IPF106"]
    assert finding.status.value == "unsafe" and finding.reason == "view-base-read-after"


def findings_06(body: str) -> list:
    result = process_source((HEAD + textwrap.dedent(body)).encode(), "m.py", Settings(select=("ALL",)))
    return [f for f in result.findings if f.code.endswith("06")]


GRAD_VIEW = "    w = torch.randn(4, 2, requires_grad=True)\n    q, k = (w * 2).chunk(2)\n"
NO_GRAD_WRITE = "    with torch.no_grad():\n        q.mul_(2)\n"


@pytest.mark.parametrize("context, after", [
    ("no_grad", "    return (q * 3).sum()\n"),  # the view used with grad on
    ("no_grad", "    return torch.exp(k)\n"),  # another output of the same chunk
    ("no_grad", "    return q[0].sum()\n"),  # a view of it
    ("inference_mode", "    return q.sum()\n"),  # PyTorch raises the same way
])
def test_a_no_grad_write_then_a_use_with_grad_on_is_a_proven_error(context, after):
    found = findings_06("def f():\n" + GRAD_VIEW + NO_GRAD_WRITE.replace("no_grad", context) + after)
    assert [(f.code, f.status.value, f.reason) for f in found] == [("IPF106", "unsafe", "no-grad-view-write")]
    assert found[0].plan is not None  # the outputs made ordinary views (`tensor_split`): the use is allowed


@pytest.mark.parametrize("loop, reported", [
    ("    for step in range(3):\n        y = q * 3\n" + NO_GRAD_WRITE.replace("\n    ", "\n        ").replace("    with", "        with", 1), True),
    ("    while w.sum() > 0:\n        y = q * 3\n" + NO_GRAD_WRITE.replace("\n    ", "\n        ").replace("    with", "        with", 1), True),
    ("    while q.sum() > 0:\n" + NO_GRAD_WRITE.replace("\n    ", "\n        ").replace("    with", "        with", 1), True),
    ("    for row in q:\n" + NO_GRAD_WRITE.replace("\n    ", "\n        ").replace("    with", "        with", 1), False),
])
def test_a_no_grad_write_whose_use_comes_on_the_next_turn_of_a_loop(loop, reported):
    """The use before the write, in the loop's body (or a ``while`` test), runs again after it;
    a ``for`` loop's iterable is read once, before the first turn."""
    found = findings_06("def f():\n" + GRAD_VIEW + loop)
    assert [(f.code, f.reason) for f in found] == ([("IPF106", "no-grad-view-write")] if reported else [])


NO_GRAD_VIEWS = ("def f():\n    w = torch.randn(4, 2, requires_grad=True)\n    h = w * 2\n"
                 "    with torch.no_grad():\n        v = h[0]\n{more}        v.mul_(2)\n    return (v * 3).sum(){read}\n")


@pytest.mark.parametrize("more, read, detached", [
    ("", "", ["v = h[0].detach()"]),
    ("        u = h[0:2]\n", " + u.sum()", ["v = h[0].detach()", "u = h[0:2].detach()"]),
    ("        u = v[1:]\n", " + u.sum()", ["v = h[0].detach()", "u = v[1:].detach()"]),
    ("        if w.sum() > 0:\n            u = h.t()\n", "", ["v = h[0].detach()", "u = h.t().detach()"]),
])
def test_views_made_under_no_grad_then_written_and_used_are_detached_where_they_are_made(more, read, detached):
    """Of the two meanings PyTorch names (view and write both inside no_grad, or both outside),
    the fix takes the one the block states: every view of the tensor bound there is detached,
    so writes reach the memory untracked and later reads see them (unsafe; repair verifies)."""
    body = NO_GRAD_VIEWS.format(more=more, read=read)
    found = findings_06(body)
    assert [(f.code, f.status.value, f.reason) for f in found] == [("IPF106", "unsafe", "no-grad-view-write")]
    fixed = process_source((HEAD + body).encode(), "m.py", Settings(select=("ALL",), unsafe_fixes=True),
                           fix=True).fixed
    assert [line.strip() for line in fixed.splitlines() if ".detach()" in line] == detached


@pytest.mark.parametrize("more", [
    "        a, b = h.chunk(2)\n",  # outputs of a multi-view call: no `.detach()` follows them
    "        for r in h:\n            pass\n",
    "        u: torch.Tensor = h[1]\n",
])
def test_no_detach_fix_where_a_view_of_the_tensor_in_the_block_cannot_take_one(more):
    found = findings_06(NO_GRAD_VIEWS.format(more=more, read=""))
    assert [(f.code, f.status.value, f.reason) for f in found] == [("IPF106", "manual", "no-grad-view-write")]


@pytest.mark.parametrize("body", [
    "def f():\n" + GRAD_VIEW + NO_GRAD_WRITE + "    return q.shape, q.detach(), q > 0\n",  # metadata only
    "def f():\n" + GRAD_VIEW + NO_GRAD_WRITE + "    with torch.no_grad():\n        return q * 3\n",  # grad off
    "def f():\n" + GRAD_VIEW + NO_GRAD_WRITE + "    q = torch.ones(2)\n    return q * 3\n",  # rebound first
    "def f():\n" + GRAD_VIEW + "    with torch.no_grad():\n        q.mul_(2)\n        return q * 3\n",  # inside
    "def f():\n    t = torch.zeros(4, 2)\n    q, k = t.chunk(2)\n" + NO_GRAD_WRITE + "    return q * 3\n",  # no grad
])
def test_no_grad_writes_pytorch_allows_are_not_reported(body):
    assert findings_06(body) == []


def test_a_no_grad_write_into_a_view_of_unknown_requires_grad_is_possible_only():
    body = "def f(x):\n    q, k = x.chunk(2)\n" + NO_GRAD_WRITE + "    return q * 3\n"
    assert [f.code for f in findings_06(body)] == ["IPF006"]


@pytest.mark.parametrize("other, status", [
    ("u = h[0:2]", "unsafe"),  # another view of the same tensor, read after: it would see the write
    ("u = h[0:2].t()", "unsafe"),  # through a chain of views
    ("u = h.sum(0)", "safe"),  # a new tensor, not a view
])
def test_another_view_of_the_tensor_viewed_read_after_the_write(other, status):
    body = ("def f():\n    w = torch.randn(4, 2, requires_grad=True)\n    h = w * 2\n"
            f"    with torch.no_grad():\n        v = h[0]\n        {other}\n    v.mul_(3)\n    return u, v\n")
    found = findings_06(body)
    assert [(f.code, f.status.value) for f in found] == [("IPF106", status)]
    if status == "unsafe":
        assert found[0].reason == "view-base-read-after"


ORDINARY = """
import torch


def f():
    w = torch.randn(4, 3, requires_grad=True)
    h = w * 2
    {make}
    {write}
    return (h * h).sum()
"""


@pytest.mark.parametrize("make, write, expected", [
    ("a, b, c, d = h.unbind(dim=0)", "a.mul_(2)", "tuple(h.select(0, i) for i in range(h.size(0)))"),
    ("a, b, c = torch.unbind(h, 1)", "a.mul_(2)", "tuple(h.select(1, i) for i in range(h.size(1)))"),
    ("a, b = h.chunk(2, dim=0)", "a.mul_(2)", "h.tensor_split(2, dim=0)"),
    ("a, b = torch.chunk(h, 2)", "a.mul_(2)", "torch.tensor_split(h, 2)"),
    ("for r in h:\n        r.mul_(2)", "", "tuple(h[i] for i in range(len(h)))"),
])
def test_writes_meant_for_the_tensor_viewed_make_the_views_ordinary(make, write, expected):
    """The tensor split is read after the write: the fix makes the outputs ordinary views (the
    write reaches it, as with grad off), and the rewritten program runs and computes what the
    views-allowed reference computes."""
    torch = pytest.importorskip("torch")
    from codemod.runtime.view_copies import ViewsAllowed

    from .final_state import KernelTrace, Run, differences, ulps_for

    source = ORDINARY.format(make=make, write=write)
    result = process_source(source.encode(), "m.py", Settings(select=("ALL",), unsafe_fixes=True), fix=True)
    assert result.changed and expected in result.fixed, result.fixed
    [finding] = [f for f in result.findings if f.code == "IPF106"]
    assert finding.status.value == "unsafe"

    def run(text, mode=None):
        scope: dict = {}
        exec(compile(text, "m.py", "exec"), scope)
        torch.manual_seed(0)
        trace = KernelTrace()
        with (mode if mode is not None else contextlib.nullcontext()), trace:
            state = Run(y=scope["f"]().detach())
        state.kernels = tuple(trace.kernels)
        return state

    # bit for bit where the same kernels ran; within a few ulps where the rewrite runs others
    fixed, reference = run(result.fixed), run(source, ViewsAllowed())
    assert differences(fixed, reference, ulps_for(fixed, reference)) == {}


def test_chunks_other_than_two_keep_the_copy_fix():
    """``chunk(3)`` and ``tensor_split(3)`` size pieces differently (7 rows: 3, 3, 1 against 3, 2,
    2): no ordinary-views fix, the copy stays (unsafe)."""
    source = ORDINARY.format(make="a, b, c = h.chunk(3, 0)", write="a.mul_(2)\n    print(a.sum())")
    result = process_source(source.encode(), "m.py", Settings(select=("ALL",), unsafe_fixes=True), fix=True)
    assert result.changed and "tensor_split" not in result.fixed and "a = a.mul(2)" in result.fixed


def test_a_tensor_bound_again_after_its_views_were_made_is_another_tensor():
    """``labels = labels[keep]`` after iterating ``labels``: the write goes into the new tensor,
    which no view of the loop shares (transformers' OneFormer post-processing)."""
    body = ("def f(n, idx, keep):\n    for i in range(n):\n        labels = torch.arange(n)[idx]\n"
            "        for j, lab in enumerate(labels):\n            print(lab)\n        labels = labels[keep]\n"
            "        for j in range(labels.shape[0]):\n            labels[j] = 0\n    return labels\n")
    assert findings_06(body) == []
