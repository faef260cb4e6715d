"""Issue 24 (recall, rec24g): writes into parameters reached through modules the file builds
(family B, "a leaf Variable that requires grad is being used in an in-place operation").

Each program is a small shape of the group (written from the pattern, not copied from a report),
run with torch: the proven ones raise at the write, the negative controls run. A proven write is
fixed safely (`with torch.no_grad():`) only where the new value carries no gradient (issue 23's
meaning rule); the fixed program's parameters and gradients equal a control that sets the values
outside autograd (through `.data`).
"""

from __future__ import annotations

import textwrap

import torch

from codemod.config import Settings
from codemod.engine.pipeline import process_source
from tests.programs import changed_by_fix, raises_inplace, run_program

HEADER = "import torch\nimport torch.nn as nn\n\n\n"
OFFSET = HEADER.count("\n")


def found(body: str, select=("IPF1",)):
    data = (HEADER + textwrap.dedent(body)).encode()
    result = process_source(data, "case.py", Settings(select=select))
    assert result.error is None, result.error
    return [(f.code, f.span.line - OFFSET, f.status.value if f.status else None, f.reason) for f in result.findings]


def marks(body: str, select=("IPF1",)):
    return [(code, line, status) for code, line, status, _ in found(body, select)]


def run(source: str, name: str = "main"):
    return run_program(source, name)


def leaf_error(source: str, name: str = "main") -> bool:
    # a leaf, a view of one, or one of several views of one (`chunk`): refused at the write
    return raises_inplace(source, name, message=("leaf Variable that requires grad", "is a view and is being modified inplace"))


def fixed(body: str) -> str:
    return changed_by_fix(HEADER + textwrap.dedent(body))


# ------------------------------------------------- a parameter through the file's own modules
GRID = """\
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(2, 1)

    def forward(self, x):
        return self.proj(x)


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleList([Head() for _ in range(2)])

    def forward(self, x):
        return sum(h(x) for h in self.heads)


def main():
    net = Stack()
    x = torch.randn(4, 2)
    values = torch.linspace(-1, 1, 3)
    best = []
    for k, v in enumerate(values):
        net.heads[1].proj.weight[0, 0] = v
        best.append(net(x).sum().item())
    net.heads[0].proj.bias[0] = values[0]
    net(x).pow(2).sum().backward()
    return {n: p.grad for n, p in net.named_parameters()} | {"w": net.heads[1].proj.weight.detach().clone()}


if __name__ == "__main__":
    main()
"""


def test_a_parameter_reached_through_the_files_modules_is_proven_and_fixed():
    assert marks(GRID) == [("IPF105", 25, "safe"), ("IPF105", 27, "safe")]
    source = HEADER + GRID
    assert leaf_error(source)
    got = run(fixed(GRID))
    want = run(source.replace("net.heads[1].proj.weight[0, 0] = v", "net.heads[1].proj.weight.data[0, 0] = v")
               .replace("net.heads[0].proj.bias[0] = values[0]", "net.heads[0].proj.bias.data[0] = values[0]"))
    assert got.keys() == want.keys() and all(torch.allclose(got[k], want[k]) for k in want)


RNN = """\
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(3, 2, num_layers=2)
        self.reset()

    def reset(self):
        for i in range(self.rnn.num_layers):
            getattr(self.rnn, f'bias_ih_l{i}').chunk(4)[1].fill_(1)

    def forward(self, x):
        return self.rnn(x)[0]


def main():
    enc = Encoder()
    enc(torch.randn(5, 1, 3)).sum().backward()
    return {n: p.grad for n, p in enc.named_parameters()} | {"b": enc.rnn.bias_ih_l1.detach().clone()}


if __name__ == "__main__":
    main()
"""


def test_a_view_of_an_rnn_parameter_named_by_getattr_in_init_code_is_proven():
    assert marks(RNN) == [("IPF105", 9, "safe")]
    source = HEADER + RNN
    assert leaf_error(source)
    got = run(fixed(RNN))
    want = run(source.replace(".chunk(4)[1].fill_(1)", ".data.chunk(4)[1].fill_(1)"))
    assert all(torch.allclose(got[k], want[k]) for k in want)


FACTORS = """\
class Factors(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.U = nn.Parameter(torch.randn(n, 2))

    def forward(self):
        return self.U @ self.U.t()


class Solver:
    def __init__(self):
        self.model = None

    def build(self):
        self.model = Factors(3).to("cpu")

    def sweep(self, rows):
        model = self.model
        for r in range(3):
            model.U[r] = rows[r]


def main():
    s = Solver()
    s.build()
    s.sweep(torch.ones(3, 2))
    s.model().sum().backward()
    return {"g": s.model.U.grad}


if __name__ == "__main__":
    main()
"""


def test_a_parameter_of_a_module_held_by_another_object_is_proven():
    # `rows` is handed in by the caller: whether it requires grad is not shown, so the wrap is unsafe
    assert found(FACTORS) == [("IPF105", 20, "unsafe", "value-requires-grad")]
    assert leaf_error(HEADER + FACTORS)


# ----------------------------------------------------------- the precision trap: grad mode
INIT_ONLY_HANDED_ON = """\
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.apply(self._init)

    def _init(self, m):
        self.fc.weight[0].fill_(0.5)
"""

CALLED_UNDER_NO_GRAD = """\
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def init_weights(self):
        self.inner.fc.weight[0].fill_(0.5)


class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)


def main():
    b = Block()
    with torch.no_grad():
        b.init_weights()
    return b


if __name__ == "__main__":
    main()
"""

NEVER_CALLED = CALLED_UNDER_NO_GRAD.replace("    with torch.no_grad():\n        b.init_weights()\n", "")

FROZEN = GRID.replace("    net = Stack()\n", "    net = Stack()\n    net.requires_grad_(False)\n").replace(
    "    net(x).pow(2).sum().backward()\n", "")

NOT_REQUIRING = FACTORS.replace("nn.Parameter(torch.randn(n, 2))", "nn.Parameter(torch.randn(n, 2), requires_grad=False)") \
    .replace("    s.model().sum().backward()\n", "")

SUBCLASSED = RNN.replace("class Encoder(nn.Module):", "class Encoder(nn.Module):  # base") + """
class Frozen(Encoder):
    def __init__(self):
        self.rnn = None
        super().__init__()
"""

DETACHED = RNN.replace(".chunk(4)[1].fill_(1)", ".detach()[1].fill_(1)")


def test_writes_whose_grad_mode_or_leaf_is_not_shown_are_not_proven():
    for body in (INIT_ONLY_HANDED_ON, CALLED_UNDER_NO_GRAD, NEVER_CALLED, FROZEN, NOT_REQUIRING, SUBCLASSED,
                 DETACHED):
        assert marks(body) == [], body
    # they stay candidates (unsafe) where the leaf is shown but grad mode is not
    assert ("IPF005", 7, "unsafe") in marks(NEVER_CALLED, ("IPF",))
    assert ("IPF005", 8, "unsafe") in marks(INIT_ONLY_HANDED_ON, ("IPF",))
    # and they run: grad is off, or the tensor does not require grad, or it is a copy
    run(HEADER + CALLED_UNDER_NO_GRAD)
    run(HEADER + NOT_REQUIRING)
    run(HEADER + DETACHED)
    run(HEADER + FROZEN)


# ----------------------------------------------------- the fix tier: the value's gradient
EDIT = """\
class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Linear(3, 2)

    def forward(self, x):
        return self.out(x)


def main():
    net = Mlp()
    emb = nn.Embedding(4, 2)
    net.out.weight[:, 0] -= emb.weight[1] * 0.1
    loss = net(torch.randn(2, 3)).sum() + emb.weight.sum()
    loss.backward()
    return {"g": emb.weight.grad}


if __name__ == "__main__":
    main()
"""


def test_a_value_that_requires_grad_keeps_the_wrap_unsafe():
    # the new value is computed with grad on from `emb.weight`: a no_grad wrap stores it without its
    # gradient, which the later backward may have meant to reach (issue 23: not the no-grad meaning)
    assert found(EDIT) == [("IPF105", 13, "unsafe", "value-requires-grad")]
    assert leaf_error(HEADER + EDIT)


def test_a_manual_step_from_gradients_stays_safe():
    body = """\
    def main():
        w = torch.randn(3, requires_grad=True)
        (w * 2).sum().backward()
        w -= 0.1 * w.grad
        return w
    """
    assert ("IPF105", 4, "safe") in marks(body)


def test_a_directory_run_proves_the_same(tmp_path):
    # with a project index (a folder given), the file's own module-level call is not a call "from
    # another file": the chain is proven as for the file alone (it was not, before)
    import subprocess
    import sys

    (tmp_path / "case.py").write_text(HEADER + GRID)
    (tmp_path / "other.py").write_text("import case\n")  # two files: the run builds a project index
    out = subprocess.run([sys.executable, "-m", "codemod", "check", "--no-cache", str(tmp_path)],
                         capture_output=True, text=True, timeout=120).stdout
    assert out.count("IPF105 [*]") == 2, out
