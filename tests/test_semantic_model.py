"""The analysis, question by question, on small snippets (table-driven).

The fixtures specify what the rules do end to end; these tables pin the facts underneath, one
part of the semantic model at a time: tensor kind, reaching bindings, aliases and views, grad
mode. Each snippet marks what is asked about with ``ask(...)`` (an unknown call: it changes no
answer)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from codemod.analysis.kinds import Kind
from codemod.analysis.model import SemanticModel
from codemod.analysis.source import Source
from codemod.analysis.tensor_kind import is_tensor

HEAD = "import torch\nimport torch.nn as nn\nimport numpy as np\n"


def model_of(snippet: str) -> SemanticModel:
    return SemanticModel(Source((HEAD + textwrap.dedent(snippet)).encode()))


def asked(model: SemanticModel) -> ast.AST:
    """The argument of the last ``ask(...)`` call."""
    calls = [n for n in ast.walk(model.module)
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "ask"]
    return max(calls, key=lambda c: c.lineno).args[0]


KINDS = [
    ("factory", "x = torch.zeros(3)\nask(x)", Kind.TENSOR),
    ("annotated parameter", "def f(x: torch.Tensor):\n    ask(x)", Kind.TENSOR),
    ("optional annotation", "def f(x: torch.Tensor | None):\n    ask(x)", Kind.TENSOR),
    ("python number", "n = 3\nask(n)", Kind.SCALAR),
    ("numpy along a method chain", "a = np.asarray(b).reshape(-1)\nask(a)", Kind.OTHER),
    ("list", "l = [1, 2]\nask(l)", Kind.OTHER),
    ("parameter", "w = nn.Parameter(torch.ones(2))\nask(w)", Kind.PARAMETER),
    ("torch module", "m = nn.Linear(2, 2)\nask(m)", Kind.MODULE),
    ("module call", "m = nn.Linear(2, 2)\ny = m(x)\nask(y)", Kind.TENSOR),
    ("unannotated parameter", "def f(x):\n    ask(x)", Kind.UNKNOWN),
    ("tensor or number by branch", "x = torch.ones(2)\nif c:\n    x = 1\nask(x)", Kind.UNKNOWN),
    ("a parameter named torch is not torch", "def f(torch):\n    ask(torch.zeros(2))", Kind.UNKNOWN),
    ("function-local import", "def f():\n    import torch as T\n    ask(T.ones(1))", Kind.TENSOR),
    ("range loop variable", "for i in range(3):\n    ask(i)", Kind.SCALAR),
    ("loop variable rebound in the body", "for i in range(3):\n    i = torch.ones(2)\n    ask(i)", Kind.TENSOR),
    ("size", "x = torch.ones(2)\nask(x.shape[0])", Kind.SCALAR),
    ("sizes", "x = torch.ones(2)\nask(x.shape[1:])", Kind.OTHER),
    ("min of sizes", "x = torch.ones(2)\nask(min(x.shape[0], 3))", Kind.SCALAR),
    ("tensor method", "x = torch.ones(2)\nask(x.exp().sum())", Kind.TENSOR),
    ("item() is a number", "x = torch.ones(2)\nask(x.sum().item())", Kind.SCALAR),
    ("forward argument used by torch", textwrap.dedent("""\
        class M(nn.Module):
            def forward(self, x):
                y = torch.relu(x)
                ask(x)
        """), Kind.TENSOR),
    ("self attribute set in __init__", textwrap.dedent("""\
        class M(nn.Module):
            def __init__(self):
                self.w = torch.ones(2)

            def f(self):
                ask(self.w)
        """), Kind.TENSOR),
    ("registered buffer", textwrap.dedent("""\
        class M(nn.Module):
            def __init__(self):
                self.register_buffer("m", torch.zeros(2))

            def f(self):
                ask(self.m)
        """), Kind.TENSOR),
]


def _case(k):
    """A table row as a pytest parameter named by its first column (marks kept)."""
    values, marks = (k.values, k.marks) if hasattr(k, "marks") else (k, ())
    return pytest.param(*values[1:], id=values[0], marks=marks)


@pytest.mark.parametrize("snippet, expected", [_case(k) for k in KINDS])
def test_tensor_kind(snippet, expected):
    model = model_of(snippet)
    expr = asked(model)
    assert model.kind(expr) is expected
    assert is_tensor(expr, model) == (expected in (Kind.TENSOR, Kind.PARAMETER))


def test_fresh_tensors_from_factories_and_legacy_constructors():
    model = model_of("a = torch.Tensor(3)\nb = torch.Tensor(torch.ones(2))\nask(torch.zeros(2))")
    first, second = (s.value for s in model.module.body[3:5])
    assert model.is_factory(first) and not model.is_factory(second)  # given a tensor: that tensor
    assert model.is_factory(asked(model))


REACHING = [
    ("the last binding hides the earlier", "x = 1\nx = 2\nask(x)", [2]),
    ("both branches reach", "x = 1\nif c:\n    x = 2\nask(x)", [1, 3]),
    ("a later binding in the loop reaches", "x = 1\nfor i in r:\n    ask(x)\n    x = 2", [1, 4]),
    ("an in-place update hides nothing", "x = 1\nx += 2\nask(x)", [1, 2]),
    ("tuple unpacking binds each name", "a, x = f()\nask(x)", [1]),
]


@pytest.mark.parametrize("snippet, lines", [r[1:] for r in REACHING], ids=[r[0] for r in REACHING])
def test_reaching_bindings(snippet, lines):
    model = model_of(snippet)
    use = asked(model)
    flow = model.flow(model.owner(use))
    found = model.reaching(flow, use.id, model.statement_of(use))
    assert [b.start[0] - HEAD.count("\n") for b in found] == lines


ALIASES = [
    ("identity", "a = torch.ones(2)\nb = a\nask(a)", {"b"}, set()),
    ("view method", "a = torch.ones(2)\nv = a.view(-1)\nask(a)", set(), {"v"}),
    ("subscript view", "a = torch.ones(2)\nv = a[0]\nask(a)", set(), {"v"}),
    ("in-place result is the tensor", "a = torch.ones(2)\nd = a.exp_()\nask(a)", {"d"}, set()),
    ("rebound since: no alias", "a = torch.ones(2)\nb = a\na = torch.zeros(2)\nask(a)", set(), set()),
    ("chained assignment", "a = b = torch.ones(2)\nask(a)", {"b"}, set()),
]


@pytest.mark.parametrize("snippet, identity, views", [a[1:] for a in ALIASES], ids=[a[0] for a in ALIASES])
def test_aliases_and_views(snippet, identity, views):
    model = model_of(snippet)
    use = asked(model)
    flow = model.flow(model.owner(use))
    start, _ = model.range(model.statement_of(use))
    assert model.aliases(flow, use.id, start) == (identity, views)


GRAD = [
    ("plain", "def f(x):\n    ask(x.add_(1))", None),
    ("no_grad block", "def f(x):\n    with torch.no_grad():\n        ask(x.add_(1))", "no-grad"),
    ("inference_mode", "def f(x):\n    with torch.inference_mode():\n        ask(x.add_(1))", "no-grad"),
    ("inference_mode(False)", "def f(x):\n    with torch.inference_mode(False):\n        ask(x.add_(1))", None),
    ("set_grad_enabled(False)", "def f(x):\n    with torch.set_grad_enabled(False):\n        ask(x.add_(1))", "no-grad"),
    ("decorated", "@torch.no_grad()\ndef f(x):\n    ask(x.add_(1))", "no-grad"),
    ("enable_grad inside no_grad", textwrap.dedent("""\
        def f(x):
            with torch.no_grad():
                with torch.enable_grad():
                    ask(x.add_(1))
        """), None),
    ("through .data", "def f(x):\n    ask(x.data.add_(1))", "data-or-grad"),
    ("optimizer step", textwrap.dedent("""\
        class SGD(torch.optim.Optimizer):
            def step(self):
                for p in self.params:
                    ask(p.add_(1))
        """), "optimizer"),
    ("registered buffer", textwrap.dedent("""\
        class M(nn.Module):
            def __init__(self):
                self.register_buffer("mean", torch.zeros(2))

            def forward(self, x):
                ask(self.mean.mul_(0.9))
        """), "buffer"),
]


@pytest.mark.parametrize("snippet, reason", [g[1:] for g in GRAD], ids=[g[0] for g in GRAD])
def test_grad_mode_and_intended_in_place(snippet, reason):
    model = model_of(snippet)
    call = asked(model)
    assert model.intended_reason(call, call.func.value) == reason


def test_each_kind_of_fact_has_its_own_cache():
    """One part per kind of fact, each remembering its own answers (no shared mixed caches)."""
    model = model_of("x = torch.zeros(3)\nask(x)")
    expr = asked(model)
    model.kind(expr)
    assert model.kinds._kind_cache[expr] is Kind.TENSOR
    assert model.tree.block_of(model.statement_of(expr)) is not None
    assert not model.tree._blocks_around or all(isinstance(v, set) for v in model.tree._blocks_around.values())


def test_a_cycle_of_bindings_is_walked_once_not_once_per_path():
    """Variables that feed each other in a loop (a diffusers state-dict converter looked like
    this): each name's kind is derived a bounded number of times, not once per path through
    the cycle (which took minutes before)."""
    names = [f"v{i}" for i in range(30)]
    body = "".join(f"        {a} = {b} + {c}\n" for a, b, c in zip(names, names[1:] + names[:1], names[2:] + names[:2]))
    model = model_of(f"def f({', '.join(names)}):\n    while True:\n{body}        ask({names[0]})\n")
    calls = 0
    original = model.kinds._kind

    def counting(expr):
        nonlocal calls
        calls += 1
        return original(expr)

    model.kinds._kind = counting
    assert model.kind(asked(model)) is Kind.UNKNOWN
    loads = sum(isinstance(n, ast.Name) for n in ast.walk(model.module))
    assert calls <= 4 * loads, (calls, loads)


def test_a_view_rebound_in_a_loop_does_not_recurse():
    """``x = x.view(...)`` in a loop: following views of views meets the same binding again
    (a transformers image processor hit Python's recursion limit)."""
    model = model_of(textwrap.dedent("""\
        def f(x, n):
            for i in range(n):
                x = x.view(-1)
                x = x.reshape(2, -1)
            ask(x)
        """))
    use = asked(model)
    assert model.leaves.origin(use, model.statement_of(use)) is None
