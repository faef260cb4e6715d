"""fix49: a write into a local buffer is not the caller's because a name that views the buffer
on one path views a parameter on another.

Group: unrolled recurrences that keep their states in a fresh buffer (`buf = state.clone()`)
and pick each step's input with a condition, `src = x if i == 0 else buf[i - 1]`, then write
the step's row `buf[i] = f(src, buf[i])`. Autograd saved a view of the buffer, so the write
breaks backward (proven), and the clone-first fix (`buf = buf.clone()` before the write) is
the one the rule offers. The alias analysis walked from `src` (a view *of* `buf`) up to what
`src` was bound from on its other path (`x`, the caller's tensor) and called the write a
mutation of the caller's tensor (`param-mutation`, unsafe). On the path where `src` is `x`,
`src` is no view of `buf`; on the path where it views `buf`, it is not `x`: a write into the
buffer never reaches `x`. The walk up now starts only from what the written name (and its
identity aliases) was bound from.

Controls where the refusal stays, each shown by running a working (grad-off) program against
the hand-made rewrite: the conditional view is read after the write (`view-alias`), and the
buffer itself views the caller's tensor on one path (`param-mutation`).
"""

from __future__ import annotations

import textwrap

import torch

from codemod.config import Settings
from tests.programs import fixed_source, process_in_project, raises_inplace, run_program

UNROLL = textwrap.dedent("""\
    import torch


    def unroll(x, state, w, u):
        buf = state.clone()
        outs = []
        for i in range(buf.shape[0]):
            src = x if i == 0 else buf[i - 1]
            buf[i] = torch.tanh(src @ w + buf[i] @ u)
            outs.append(buf[i].sum())
        return torch.stack(outs), buf


    def main():
        torch.manual_seed(0)
        x = torch.randn(3, 4, requires_grad=True)
        state = torch.randn(3, 3, 4, requires_grad=True)
        w = torch.randn(4, 4, requires_grad=True)
        u = torch.randn(4, 4, requires_grad=True)
        outs, buf = unroll(x, state, w, u)
        (outs.sum() + buf.pow(2).sum()).backward()
        return outs.detach(), buf.detach(), x.grad, state.grad, w.grad, u.grad
    """)
WRITE_LINE = 9


def reference():
    """The recurrence written out of place by hand: each step's row is a new tensor."""
    torch.manual_seed(0)
    x = torch.randn(3, 4, requires_grad=True)
    state = torch.randn(3, 3, 4, requires_grad=True)
    w = torch.randn(4, 4, requires_grad=True)
    u = torch.randn(4, 4, requires_grad=True)
    rows = []
    for i in range(state.shape[0]):
        src = x if i == 0 else rows[i - 1]
        rows.append(torch.tanh(src @ w + state[i] @ u))
    outs, buf = torch.stack([r.sum() for r in rows]), torch.stack(rows)
    (outs.sum() + buf.pow(2).sum()).backward()
    return outs.detach(), buf.detach(), x.grad, state.grad, w.grad, u.grad


def verdicts(source: str):
    result = process_in_project(source, Settings(select=("IPF1",)))
    return [(f.code, f.span.line, f.status.value if f.status else None, f.reason) for f in result.findings]


def test_the_write_into_the_fresh_buffer_is_proven_and_fixed_safely():
    assert raises_inplace(UNROLL)
    assert verdicts(UNROLL) == [("IPF104", WRITE_LINE, "safe", None)]
    fixed = fixed_source(UNROLL, project=True)
    assert "buf = buf.clone()" in fixed
    got, want = run_program(fixed), reference()
    for g, w in zip(got, want):
        assert torch.allclose(g, w, atol=1e-6), fixed


# the same shape in a module's method (a decoder stepping through its layers), input a view on one path
LAYERS = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.cells = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

        def forward(self, inp, hidden):
            h = hidden.clone()
            for k, cell in enumerate(self.cells):
                below = inp[0] if k == 0 else h[k - 1]
                h[k] = torch.sigmoid(cell(below)) * h[k]
            return h


    def main():
        torch.manual_seed(0)
        net = Stack()
        inp = torch.randn(2, 5, 4, requires_grad=True)
        hidden = torch.randn(3, 5, 4, requires_grad=True)
        h = net(inp, hidden)
        h.pow(2).sum().backward()
        return (h.detach(), inp.grad, hidden.grad) + tuple(p.grad for p in net.parameters())
    """)


def layers_reference():
    torch.manual_seed(0)
    net = run_program(LAYERS.replace("def main():", "def build():\n    return Stack\n\n\ndef main():"),
                      "build", seed=None)()
    inp = torch.randn(2, 5, 4, requires_grad=True)
    hidden = torch.randn(3, 5, 4, requires_grad=True)
    rows = []
    for k, cell in enumerate(net.cells):
        below = inp[0] if k == 0 else rows[k - 1]
        rows.append(torch.sigmoid(cell(below)) * hidden[k])
    h = torch.stack(rows)
    h.pow(2).sum().backward()
    return (h.detach(), inp.grad, hidden.grad) + tuple(p.grad for p in net.parameters())


def test_a_module_stepping_through_its_layers_is_fixed_safely():
    assert raises_inplace(LAYERS)
    assert [v[2:] for v in verdicts(LAYERS)] == [("safe", None)]
    fixed = fixed_source(LAYERS, project=True)
    assert "h = h.clone()" in fixed
    got, want = run_program(fixed), layers_reference()
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert torch.allclose(g, w, atol=1e-6), fixed


def _no_grad(source: str) -> str:
    """The program with nothing requiring grad: the in-place original works."""
    return source.replace(", requires_grad=True", "").replace(".backward()", "")


def _differs(original: str, rewritten: str) -> bool:
    got, want = run_program(rewritten), run_program(original)
    return any(not torch.equal(g, w) for g, w in zip(got, want) if g is not None)


READ_AFTER = textwrap.dedent("""\
    import torch


    def unroll(x, state, w, u):
        buf = state.clone()
        outs = []
        for i in range(buf.shape[0]):
            src = x if i == 0 else buf
            buf[i] = torch.tanh(buf[i] @ u)
            outs.append((src @ w).sum())
        return torch.stack(outs), buf


    def main():
        torch.manual_seed(0)
        x = torch.randn(3, 4, requires_grad=True)
        state = torch.randn(3, 3, 4, requires_grad=True)
        w = torch.randn(4, 4, requires_grad=True)
        u = torch.randn(4, 4, requires_grad=True)
        outs, buf = unroll(x, state, w, u)
        (outs.sum() + buf.pow(2).sum()).backward()
        return outs, buf
    """)


def test_control_the_conditional_view_read_after_the_write_stays_refused():
    """`src` views the buffer on one path and is read after the write: clone-first would hide
    the write from it (a working program, grad off, computes another `outs`)."""
    assert raises_inplace(READ_AFTER)
    assert [v[2] for v in verdicts(READ_AFTER)] and all(v[2] != "safe" for v in verdicts(READ_AFTER))
    assert fixed_source(READ_AFTER, project=True) == READ_AFTER
    working = _no_grad(READ_AFTER)
    assert _differs(working, working.replace("        buf[i] = ", "        buf = buf.clone()\n        buf[i] = "))


BUFFER_VIEWS_CALLER = textwrap.dedent("""\
    import torch


    def unroll(x, state, w, u, fresh):
        buf = state.clone() if fresh else state[:]
        outs = []
        for i in range(buf.shape[0]):
            src = x if i == 0 else buf[i - 1]
            buf[i] = torch.tanh(src @ w + buf[i] @ u)
            outs.append(buf[i].sum())
        return torch.stack(outs)


    def main():
        torch.manual_seed(0)
        x = torch.randn(3, 4, requires_grad=True)
        s0 = torch.randn(3, 3, 4, requires_grad=True)
        state = s0 * 1
        w = torch.randn(4, 4, requires_grad=True)
        u = torch.randn(4, 4, requires_grad=True)
        outs = unroll(x, state, w, u, False)
        (outs.sum() + state.pow(2).sum()).backward()
        return outs, state
    """)


def test_control_a_buffer_that_views_the_callers_tensor_stays_refused():
    """`buf = state[:]` on one path: the write reaches the caller's `state`, which it reads."""
    assert raises_inplace(BUFFER_VIEWS_CALLER)
    found = verdicts(BUFFER_VIEWS_CALLER)
    assert found and all(v[2] != "safe" for v in found)
    assert fixed_source(BUFFER_VIEWS_CALLER, project=True) == BUFFER_VIEWS_CALLER
    working = _no_grad(BUFFER_VIEWS_CALLER)
    assert _differs(working, working.replace("        buf[i] = ", "        buf = buf.clone()\n        buf[i] = "))


VIEW_KEPT_ACROSS_TURNS = textwrap.dedent("""\
    import torch


    def unroll(state, w):
        buf = state.clone()
        top = buf[:2]
        for i in range(1, buf.shape[0]):
            buf[i] = (top * w).sum(0)
        return buf


    def main():
        torch.manual_seed(0)
        state = torch.randn(4, 3, requires_grad=True)
        w = torch.randn(2, 3, requires_grad=True)
        buf = unroll(state, w)
        buf.pow(2).sum().backward()
        return buf, state
    """)


def test_control_a_view_bound_before_the_loop_is_read_by_the_next_turns_write():
    """`top` is read in the write's own value, but bound once before the loop: the next turn
    reads it after this turn's write (row 1 lies in `top`). Clone-first would leave `top` the
    old buffer's rows: a working (grad-off) program computes another `buf`."""
    assert raises_inplace(VIEW_KEPT_ACROSS_TURNS)
    found = verdicts(VIEW_KEPT_ACROSS_TURNS)
    assert found and all(v[2] != "safe" for v in found)
    assert fixed_source(VIEW_KEPT_ACROSS_TURNS, project=True) == VIEW_KEPT_ACROSS_TURNS
    working = _no_grad(VIEW_KEPT_ACROSS_TURNS)
    assert _differs(working, working.replace("        buf[i] = ", "        buf = buf.clone()\n        buf[i] = "))


WORKING = textwrap.dedent("""\
    import torch


    def unroll(x, state):
        buf = state.clone()
        outs = []
        for i in range(buf.shape[0]):
            src = x if i == 0 else buf[i - 1]
            buf[i] = src + 1
            outs.append(buf[i].sum())
        return torch.stack(outs)


    def main():
        x = torch.randn(4, requires_grad=True)
        state = torch.randn(3, 4)
        outs = unroll(x, state)
        outs.sum().backward()
        return x.grad
    """)


def test_a_working_program_is_not_proven_to_write_into_the_callers_leaf():
    """The same walk made the write into `buf` a write into `x` (the caller's leaf that
    requires grad) and proved a hazard (IPF104, proven) on a program that runs: no proof now."""
    assert torch.equal(run_program(WORKING), torch.full((4,), 3.0))
    assert verdicts(WORKING) == []
