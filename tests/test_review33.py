"""Second read of session 33's merged code (review33): soundness holes shown by running real torch.

Each test first runs the program with torch to fix its label (it works, or it raises), then asks
the tool. They fail on main at 6d8e6ff and are marked ``xfail(strict=True)``: the day one passes,
the mark must go (a strict xfail that passes fails the run).
"""

from __future__ import annotations

import textwrap

import pytest
import torch

from codemod.config import Settings
from codemod.engine.pipeline import process_source

HEADER = "import torch\nimport torch.nn as nn\n\n\n"


def _head(forward: str) -> str:
    return (HEADER + "class Head(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.proj = nn.Linear(4, 8)\n\n" + textwrap.indent(textwrap.dedent(forward), "    "))


def _runs_fine(source: str, argsets) -> bool:
    space: dict = {}
    exec(compile(source, "case.py", "exec"), space)
    try:
        for args in argsets:
            space["Head"]()(torch.randn(3, 4), *args).backward()
    except RuntimeError as error:
        assert "is a view and is being modified inplace" in str(error)
        return False
    return True


def _codes(source: str):
    result = process_source(source.encode(), "case.py", Settings(select=("IPF1",)))
    assert result.error is None, result.error
    return [f.code for f in result.findings]


# IPF106 on branches: the write must run on every path from the view's branch. `apart_until`
# checks that only inside loops (the write at the top of the loop body) and only for exits inside
# the view's own branch. Each program below runs on both branches; none raises.
NOT_REACHED = {
    # no loop: the write sits under a condition that excludes the view's branch
    "write-under-the-other-condition": ("""\
        def forward(self, x, first):
            if first:
                q, k = self.proj(x).chunk(2, dim=-1)
            else:
                q = self.proj(x)[:, :4] * 2
            if not first:
                q *= 2.0
            return q.sum()
        """, [(True,), (False,)]),
    # no loop: the view's path returns after the `if`, before the write
    "return-after-the-if": ("""\
        def forward(self, x, first):
            if first:
                q, k = self.proj(x).chunk(2, dim=-1)
            else:
                q = self.proj(x)[:, :4] * 2
            if first:
                return (q * k).sum()
            q *= 2.0
            return q.sum()
        """, [(True,), (False,)]),
    # in a loop: a `break` between the `if` and the write (inside the branch it is refused)
    "break-between-the-if-and-the-write": ("""\
        def forward(self, x):
            for i in range(3):
                if i == 2:
                    q, k = self.proj(x).chunk(2, dim=-1)
                else:
                    q = self.proj(x)[:, :4] * 2
                if i == 2:
                    break
                q *= 2.0
            return q.sum()
        """, [()]),
    # the view made by a walrus in an inner `if`'s test, whose body returns: `_may_leave`
    # follows `branch(made, inner_if)`, None for a test, into the `else` only
    "walrus-in-a-test-whose-body-returns": ("""\
        def forward(self, x, first):
            if first:
                if (q := self.proj(x).chunk(2, dim=-1)[0]) is not None:
                    return q.sum()
            else:
                q = self.proj(x)[:, :4] * 2
            q *= 2.0
            return q.sum()
        """, [(True,), (False,)]),
}


@pytest.mark.parametrize("case", sorted(NOT_REACHED))
def test_ipf106_is_not_proven_where_the_views_path_never_reaches_the_write(case):
    forward, argsets = NOT_REACHED[case]
    source = _head(forward)
    assert _runs_fine(source, argsets)  # the label, by running it
    assert "IPF106" not in _codes(source)


# The plain binding of the other branch may alias a tensor the program keeps (a buffer, an
# input): there `q += x` is the program's update of that tensor, and the "safe" rewrite
# `q = q + x` drops it. A program that only takes that branch works, and the fix changes it.
ALIAS = HEADER + textwrap.dedent("""\
    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 8)
            self.register_buffer("acc", torch.zeros(3, 4))

        def forward(self, x, split):
            if split:
                q, k = self.proj(x).chunk(2, dim=-1)
            else:
                q = self.acc
            q += x
            return self.proj(x).sum()


    def compute():
        torch.manual_seed(0)
        m = Head()
        for _ in range(3):
            m(torch.ones(3, 4), False).backward()
        return m.acc.clone()
    """)


def test_a_safe_ipf106_fix_keeps_a_working_programs_result():
    before: dict = {}
    exec(compile(ALIAS, "case.py", "exec"), before)
    fixed = process_source(ALIAS.encode(), "case.py", Settings(), fix=True)  # safe fixes only
    after: dict = {}
    exec(compile(fixed.fixed if fixed.changed else ALIAS, "case.py", "exec"), after)
    assert torch.equal(before["compute"](), after["compute"]())


# `match` capture patterns bind names, but the binder has no visit for MatchAs / MatchStar /
# MatchMapping.rest: a name rebound by `case y:` still reads as its earlier binding. A false
# IPF103, and its safe fix drops the program's in-place update of the captured tensor.
MATCH = HEADER + textwrap.dedent("""\
    acc = torch.ones(3)


    def h(x):
        y = torch.sigmoid(x)
        match acc:
            case y:
                pass
        y.mul_(2)
        return x.sum()


    def compute():
        x = torch.randn(3, requires_grad=True)
        h(x).backward()
        return acc.clone()
    """)


def test_a_name_rebound_by_a_match_capture_is_not_the_saved_tensor():
    before: dict = {}
    exec(compile(MATCH, "case.py", "exec"), before)
    assert torch.equal(before["compute"](), torch.full((3,), 2.0))  # runs, and doubles acc
    assert _codes(MATCH) == []
    fixed = process_source(MATCH.encode(), "case.py", Settings(), fix=True)
    after: dict = {}
    exec(compile(fixed.fixed if fixed.changed else MATCH, "case.py", "exec"), after)
    assert torch.equal(after["compute"](), torch.full((3,), 2.0))


# LBFGS's closure writes a parameter itself (a projection under no_grad, before its backward).
# The script runner's locator is popped for the whole step, so the write is unseen; when the
# closure's backward finds the change, `_QuietSteps.flush` reports every parameter whose version
# moved since the step began as the step's write, at the `opt.step(closure)` line. LBFGS calls
# the closure before it updates anything: the step made no write. (At 8b14e2f: "fix it by hand".)
LBFGS_CLAMP = textwrap.dedent("""\
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1))
    opt = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=4)
    x = torch.randn(64, 3)
    y = (x ** 2).sum(1, keepdim=True)
    for epoch in range(2):
        def closure():
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            with torch.no_grad():
                model[2].weight.clamp_(-0.3, 0.3)
            loss.backward()
            return loss

        opt.step(closure)
        print("loss", closure().item())
    """)


def test_a_closures_own_write_is_not_reported_as_the_steps(tmp_path):
    import os
    import subprocess
    import sys

    (tmp_path / "lbfgs.py").write_text(LBFGS_CLAMP)
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    plain = subprocess.run([sys.executable, "-c", "import torch, runpy\ncalls = []\n"
                            "orig = torch.optim.LBFGS.step\n"
                            "def step(self, closure):\n"
                            "    start = [q._version for q in self._params]\n"
                            "    def counted():\n"
                            "        calls.append(start == [q._version for q in self._params])\n"
                            "        return closure()\n"
                            "    return orig(self, counted)\n"
                            "torch.optim.LBFGS.step = step\n"
                            "try:\n    runpy.run_path('lbfgs.py', run_name='__main__')\n"
                            "except RuntimeError as e:\n    print('raised in closure call', len(calls), 'state', calls)\n"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    # the first closure call raised, before the step wrote any parameter
    assert "raised in closure call 1 state [True]" in plain.stdout, plain.stderr
    ran = subprocess.run([sys.executable, "-m", "codemod", "run", "lbfgs.py"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert ran.returncode == 1, ran.stderr
    assert "opt.step(closure)  [optimizer.step]" not in ran.stdout, ran.stdout


# The same closure seen by `locate` (its function mode stays on inside steps): any write under an
# optimizer's frames is "optimizer-step" (`_parameter_update_frame` walks the whole stack, past
# the user's closure), so an activation's `h.mul_(2)` in the closure, a plain IPF103 bug, is told
# "an optimizer step modified a parameter". (Older than session 33: `_optimizer_frame` did the
# same; `load` now inherits the walk, so a user's load hook writing in place is "load" too.)
LBFGS_ACTIVATION = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def compute():
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 16), nn.Linear(16, 1))
        opt = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=2)
        x = torch.randn(8, 3)
        y = x.sum(1, keepdim=True)

        def closure():
            opt.zero_grad()
            h = torch.sigmoid(model[0](x))
            h.mul_(2)
            loss = ((model[1](h) - y) ** 2).mean()
            loss.backward()
            return loss

        opt.step(closure)
        return {"w": model[0].weight.detach().clone()}
    """)


def test_an_activation_written_in_a_closure_is_not_an_optimizer_step(tmp_path):
    from codemod.runtime.locate import locate_target

    path = tmp_path / "closure.py"
    path.write_text(LBFGS_ACTIVATION)
    report = locate_target(f"{path}::compute", timeout=240)
    assert [(c.kind, c.mutation_op) for c in report.conflicts] == [("saved-then-modified", "mul_")], \
        [c.describe() for c in report.conflicts]


# Older than session 33, found on the way: a save inside a `return` (or `raise`) statement is
# taken as live at a write after that statement's `if`, though no path runs both. The program
# runs on both branches; IPF101 says `q` "was saved for backward by `*`".
RETURN_SAVE = textwrap.dedent("""\
    import torch


    def f(x, first):
        q = torch.sigmoid(x) + 1
        if first:
            return (q * x).sum()
        q *= 2
        return q.sum()


    def main():
        x = torch.randn(3, requires_grad=True)
        f(x, True).backward()
        f(x, False).backward()
    """)


def test_a_save_in_a_return_statement_is_not_live_after_it():
    space: dict = {}
    exec(compile(RETURN_SAVE, "case.py", "exec"), space)
    space["main"]()  # both paths run
    assert _codes(RETURN_SAVE) == []


# The control: a `finally` around the `return` runs after the value is computed, so its write
# follows the save on the same path; that program raises at backward and stays proven.
RETURN_FINALLY = textwrap.dedent("""\
    import torch


    def f(x):
        q = torch.sigmoid(x) + 1
        try:
            return (q * x).sum()
        finally:
            q *= 2


    def main():
        x = torch.randn(3, requires_grad=True)
        f(x).backward()
    """)


def test_a_write_in_a_finally_after_a_return_still_follows_the_save():
    space: dict = {}
    exec(compile(RETURN_FINALLY, "case.py", "exec"), space)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        space["main"]()
    assert "IPF101" in _codes(RETURN_FINALLY)
