"""Issue 24 (recall half, rec24f): writes into a buffer that an op read back and saved.

A buffer built by a factory is filled part by part, and a part is read back through an op that
saves its input before (or in the value of) the next write into the buffer: the write bumps the
buffer's version and backward dies. Two op facts were missing on the way: a torch module built and
called in one expression (``nn.Softplus()(b[:, 0])``) and ``torch.max(a, b)`` / ``a.min(b)`` of two
tensors (``torch.maximum``, which saves both; ``torch.max(a, dim)`` saves only the indices). And a
write whose value reads the buffer was taken as covered by the clone of the write before it.

Each program here is a new small one written from the pattern; torch runs it to show the hazard is
real, and the fixed program's gradients are compared with an out-of-place control.
"""

from __future__ import annotations

import textwrap

import torch

from codemod.config import Settings
from codemod.engine.pipeline import fix_source, process_source
from tests.programs import run_program

from .backward import raises_at_backward

HEADER = "import torch\nimport torch.nn as nn\n\n\n"
OFFSET = HEADER.count("\n")


def _source(body: str) -> str:
    return HEADER + textwrap.dedent(body)


def found(body: str, select=("IPF1",)):
    result = process_source(_source(body).encode(), "case.py", Settings(select=select))
    assert result.error is None, result.error
    return [(f.code, f.span.line - OFFSET, f.status.value if f.status else None) for f in result.findings]


def _run(source: str, name: str = "grads"):
    return run_program(source, name, seed=None)


def _fixed(body: str) -> str:
    result = fix_source(_source(body).encode(), "case.py", Settings())
    assert result.error is None, result.error
    assert result.fixed is not None
    return result.fixed


# ----------------------------------------------------------------- a module built and called at once
COLUMNS = """\
def stack_columns(a):
    out = torch.zeros_like(a)
    out[:, 0] = a[:, 0]
    out[:, 1] = {op}(out[:, 0])
    return out


def grads():
    a = torch.randn(4, 2, dtype=torch.float64, requires_grad=True)
    stack_columns(a).pow(2).sum().backward()
    return a.grad
"""

CONTROL = """\
def grads():
    a = torch.randn(4, 2, dtype=torch.float64, requires_grad=True)
    first = a[:, 0]
    torch.stack([first, {op}(first)], 1).pow(2).sum().backward()
    return a.grad
"""


def test_a_module_built_and_called_at_once_saves_what_it_reads():
    for op in ("nn.Softplus()", "torch.nn.GELU()", "nn.LogSigmoid()"):
        body = COLUMNS.format(op=op)
        assert raises_at_backward(lambda: _run(_source(body))), op
        assert found(body) == [("IPF104", 4, "safe")], op
        fixed = _fixed(body)
        torch.manual_seed(0)
        got = _run(fixed)
        torch.manual_seed(0)
        want = _run(_source(CONTROL.format(op=op)))
        assert torch.allclose(got, want), op


def test_a_module_built_and_called_at_once_that_saves_no_input_is_no_hazard():
    # ReLU saves its result, Identity and Tanhshrink (x - tanh(x)) no input: the write into the buffer breaks nothing
    for op in ("nn.ReLU()", "nn.Identity()", "nn.Tanhshrink()"):
        body = COLUMNS.format(op=op)
        assert not raises_at_backward(lambda: _run(_source(body))), op
        assert found(body) == [], op


def test_the_clone_of_the_write_before_does_not_cover_a_value_reading_the_buffer():
    body = COLUMNS.format(op="nn.Softplus()")
    fixed = _fixed(body)
    assert "out_value = nn.Softplus()(out[:, 0])\n    out = out.clone()\n    out[:, 1] = out_value" in fixed
    # writes whose values do not read the buffer still get one clone, before the first
    plain = "def f(a):\n    out = torch.zeros(3)\n    out[0] = a.exp()\n    out[1] = a.sin()\n    return out\n"
    assert [line for _, line, _ in found(plain, ("IPF0", "IPF1", "IPF2"))] == [3]


# ----------------------------------------------------------------- torch.max of two tensors
RECURSION = """\
def smooth_max(x0, x1):
    m = {form}
    return m + ((x0 - m).exp() + (x1 - m).exp()).log()


def scan(x):
    table = torch.zeros(x.shape[0], x.shape[1] + 1, dtype=x.dtype)
    table[0, 1:] = x[0]
    for t in range(1, x.shape[0]):
        table[t, 1:] = x[t] + smooth_max(table[t - 1, 1:], table[t - 1, :-1])
    return table[-1]


def grads():
    x = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    scan(x).sum().backward()
    return x.grad
"""


def test_max_of_two_tensors_saves_both():
    for form in ("torch.max(x0, x1)", "x0.max(x1)", "torch.maximum(x0, x1)", "torch.min(x0, x1)",
                 "torch.max(x0, other=x1)"):
        body = RECURSION.format(form=form)
        assert raises_at_backward(lambda: _run(_source(body))), form
        assert [(c, line) for c, line, _ in found(body)] == [("IPF104", 10)], form
        torch.manual_seed(0)
        got = _run(_fixed(body))
        torch.manual_seed(0)
        want = _run(_source(body.replace("    table[t, 1:] = x[t]", "    table = table.clone()\n        table[t, 1:] = x[t]")
                            .replace("smooth_max(table[t - 1, 1:], table[t - 1, :-1])",
                                     "smooth_max(table[t - 1, 1:].clone(), table[t - 1, :-1].clone())")))
        assert torch.allclose(got, want), form


def test_max_along_a_dimension_saves_no_input():
    # torch.max(x, dim) saves the indices only (measured): the buffer may be written afterwards
    body = RECURSION.format(form="torch.max(torch.stack([x0, x1]), 0)[0]").replace(
        "torch.stack([x0, x1])", "x0.unsqueeze(0).expand(2, -1)")
    assert not raises_at_backward(lambda: _run(_source(body)))
    assert found(body) == []
    # the other operand unknown (a parameter no call in the file passes): a dimension, as before
    body = "def f(x, d):\n    buf = torch.zeros(3)\n    buf[0] = x.sum()\n    buf[1] = torch.max(buf[:1], d)[0]\n    return buf\n"
    assert found(body) == []


def test_max_of_two_tensors_without_grad_is_no_hazard():
    body = RECURSION.format(form="torch.max(x0, x1)").replace("def scan(x):", "@torch.no_grad()\ndef scan(x):")
    assert found(body) == []


# ----------------------------------------------------------------- a torch function handed in as a parameter
REDUCE = """\
def combine(a, b, c, op{default}):
    buf = torch.zeros(4, dtype=torch.float64)
    buf[0] = a
    buf[1] = b
    buf[2] = op(buf[0], buf[1])
    buf[3] = c
    return buf.sum()


def grads():
    xs = [torch.randn((), dtype=torch.float64, requires_grad=True) for _ in range(3)]
    {call}.backward()
    return torch.stack([x.grad for x in xs])
"""


def _reduce(default="", call="combine(*xs, op=torch.mul)"):
    return REDUCE.format(default=default, call=call)


def test_a_torch_function_every_call_hands_in_is_that_function():
    for body in (_reduce(), _reduce(call="combine(xs[0], xs[1], xs[2], torch.mul)"),
                 _reduce(default="=torch.mul", call="combine(xs[0], xs[1], xs[2])")):
        assert raises_at_backward(lambda: _run(_source(body))), body
        got = found(body)
        assert [(c, line) for c, line, _ in got] == [("IPF104", 5), ("IPF104", 6)], body  # both writes follow the save
        torch.manual_seed(0)
        fixed = _run(_fixed(body))
        torch.manual_seed(0)
        want = _run(_source(body.replace("buf[2] = op(buf[0], buf[1])", "buf[2] = op(a, b)")))
        assert torch.allclose(fixed, want), body
    assert process_source(_source(_reduce()).encode(), "case.py", Settings()).findings[0].message.endswith(
        "saved for backward by `torch.mul`, handed in as `op` at line 9")


def test_a_handed_in_function_that_is_not_known_stays_unproven():
    # torch.add saves nothing: no hazard (and torch agrees)
    body = _reduce(call="combine(*xs, op=torch.add)")
    assert not raises_at_backward(lambda: _run(_source(body)))
    assert found(body, ("IPF1", "IPF2")) == []
    # two calls, two functions: which one runs is not one answer
    two = _reduce(call="combine(*xs, op=torch.mul) + combine(*xs, op=torch.add)")
    assert found(two) == []
    assert [c for c, _, _ in found(two, ("IPF2",))] == ["IPF204", "IPF204"]
    # the function handed on elsewhere (its callers are not all seen), or a `**kwargs` spread
    assert found(_reduce() + "\n\nHANDLERS = [combine]\n") == []
    assert found(_reduce(call="combine(*xs, **{'op': torch.mul})")) == []
    # `*xs` may reach the parameter: the default is not known to be what runs
    assert found(_reduce(default="=torch.mul", call="combine(*xs)")) == []
    # a lambda or a user function: not a torch function
    assert found(_reduce(call="combine(*xs, op=lambda u, v: u * v)")) == []

