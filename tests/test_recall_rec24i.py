"""Issue 24 (recall, rec24i): leaves whose grad requirement is switched on after they are made.

Group 1: a state tensor made by a factory (or by a helper or method whose every return is one),
then made to require grad by a statement of its own (``state.requires_grad_()``,
``state.requires_grad = True``), then written in place, here or in a helper it is handed to
(also through ``*args``: ``def reset(*states): for s in states: s.zero_()``). PyTorch refuses the
write ("a leaf Variable that requires grad is being used in an in-place operation").

Each program is a new small one written from the pattern; torch runs it to show the write really
raises, and the fixed program's values and gradients are compared with a control that makes the
update outside autograd (``.data``). The negative controls (the tensor already required grad
through a graph, the switch in a branch that does not hold the write, the switch after the write,
the tensor rebound, the call under ``no_grad``) run without the error and stay unproven.
"""

from __future__ import annotations

import textwrap

import torch

from codemod.config import Settings
from codemod.engine.pipeline import process_source
from tests.programs import changed_by_fix, raises_inplace, run_program

HEADER = "import torch\nimport torch.nn as nn\n\n\n"
OFFSET = HEADER.count("\n")


def marks(body: str, select=("IPF1",)):
    data = (HEADER + textwrap.dedent(body)).encode()
    result = process_source(data, "case.py", Settings(select=select))
    assert result.error is None, result.error
    return [(f.code, f.span.line - OFFSET, f.status.value if f.status else None) for f in result.findings]


def run(source: str, name: str = "main"):
    return run_program(source, name)


def leaf_error(source: str, name: str = "main") -> bool:
    return raises_inplace(source, name, message="leaf Variable that requires grad")


def fixed(body: str) -> str:
    return changed_by_fix(HEADER + textwrap.dedent(body))


def same(got: dict, want: dict) -> bool:
    return got.keys() == want.keys() and all(torch.allclose(got[k], want[k]) for k in want)


# ------------------------------------------------- reset through a helper taking *states
RESET = """\
class Cell(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)

    def init_state(self, batch=2):
        return torch.ones(batch, 4)

    def forward(self, x, h):
        return torch.tanh(self.fc(x) + 0.5 * h)


def reset(*states):
    for s in states:
        s.fill_(0.0)


def main():
    cell = Cell()
    h0 = cell.init_state()
    h0.requires_grad_(True)
    c0 = torch.randn(2, 4)
    c0.requires_grad = True
    reset(h0, c0)
    h = h0
    for x in torch.randn(3, 2, 3):
        h = cell(x, h) + c0
    h.pow(2).sum().backward()
    return {"h0": h0.grad, "c0": c0.grad, "w": cell.fc.weight.grad}


if __name__ == "__main__":
    main()
"""


def test_a_state_switched_on_then_reset_through_varargs_is_proven_and_fixed():
    assert marks(RESET) == [("IPF105", 15, "safe")]
    source = HEADER + RESET
    assert leaf_error(source)
    got = run(fixed(RESET))
    want = run(source.replace("s.fill_(0.0)", "s.data.fill_(0.0)"))
    assert same(got, want)


# ------------------------------------------------- the switch and the write in one function
LOCAL = """\
def main():
    w = torch.zeros(3)
    w.requires_grad = True
    w.uniform_(-0.1, 0.1)
    x = torch.randn(5, 3)
    (x @ w).sum().backward()
    return {"w": w.grad}


if __name__ == "__main__":
    main()
"""


def test_a_factory_value_switched_on_by_attribute_then_written_is_proven():
    assert [m[:2] for m in marks(LOCAL)] == [("IPF105", 4)]
    assert leaf_error(HEADER + LOCAL)


# ------------------------------------------------- negative controls
CONTROLS = {
    # already requires grad through a graph: not a leaf, the write runs
    "graph": """\
def main():
    lin = nn.Linear(3, 3)
    h = lin(torch.randn(2, 3))
    h.requires_grad_(True)
    h.mul_(2)
    h.sum().backward()
    return {"w": lin.weight.grad}
""",
    # the switch in a branch that does not hold the write (not taken here)
    "branch": """\
def main(train=False):
    w = torch.ones(3)
    if train:
        w.requires_grad_()
    w.zero_()
    return {"w": w}
""",
    # the switch after the write
    "after": """\
def main():
    w = torch.ones(3)
    w.zero_()
    w.requires_grad_()
    (w * 2).sum().backward()
    return {"w": w.grad}
""",
    # rebound to a computed value before the write
    "rebound": """\
def main():
    w = torch.ones(3)
    w.requires_grad_()
    w = w * 2
    w.zero_()
    return {"w": w}
""",
    # the helper runs under no_grad
    "no_grad": """\
def reset(*states):
    for s in states:
        s.zero_()


def main():
    w = torch.ones(3)
    w.requires_grad_()
    with torch.no_grad():
        reset(w)
    return {"w": w}
""",
    # a helper also handed a tensor that is not a leaf: not known for every call
    "mixed": """\
def reset(*states):
    for s in states:
        s.mul_(0.5)


def main():
    lin = nn.Linear(3, 3)
    h = lin(torch.randn(2, 3))
    reset(h)
    h.sum().backward()
    return {"w": lin.weight.grad}
""",
}


def test_negative_controls_run_and_stay_unproven():
    for name, body in CONTROLS.items():
        run(HEADER + textwrap.dedent(body))  # no error
        assert not [m for m in marks(body) if m[0] == "IPF105"], name


# ------------------------------------------------- group 2: a method of a module held by the module
# ``self.<member>.<method>(x)`` where ``self.<member>`` is an instance of a class of this file: the
# call runs that class's method (what it saves of its argument is its summary), or the module the
# class sets ``self.<method>`` to.
SCORER = """\
class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def score(self, h):
        return self.proj(h).tanh()


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.scorer = Scorer()
        self.inp = nn.Linear(4, 4)

    def forward(self, x):
        h = self.inp(x)
        s = self.scorer.score(h)
        h.mul_(0.5)
        return (s + h).sum()


def main():
    m = Model()
    m(torch.randn(3, 4)).backward()
    return {n: p.grad for n, p in m.named_parameters()}


if __name__ == "__main__":
    main()
"""


def saved_error(source: str, name: str = "main") -> bool:
    try:
        run(source, name)
    except RuntimeError as error:
        return "modified by an inplace operation" in str(error)
    return False


def test_a_method_of_a_member_module_that_saves_its_argument_is_proven_and_fixed():
    assert marks(SCORER) == [("IPF103", 19, "safe")]
    source = HEADER + SCORER
    assert saved_error(source)
    got = run(fixed(SCORER))
    want = run(source.replace("h.mul_(0.5)", "h = h.mul(0.5)"))
    assert same(got, want)


IDS = """\
class Tokens(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(12, 4)

    def embed(self, ids):
        return self.table(ids) * 2.0


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.tokens = Tokens()
        self.head = nn.Linear(4, 12)

    def loss(self, ids, keep):
        x = self.tokens.embed(ids)
        ids.masked_fill_(~keep, -100)
        return nn.functional.cross_entropy(self.head(x).transpose(1, 2), ids)


def main():
    m = Model()
    ids = torch.randint(0, 12, (2, 5))
    m.loss(ids, torch.rand(2, 5) > 0.3).backward()
    return {n: p.grad for n, p in m.named_parameters()}
"""


def test_ids_written_after_a_member_modules_embedding_saved_them_are_proven():
    assert [m[:2] for m in marks(IDS)] == [("IPF103", 18)]
    assert saved_error(HEADER + IDS)
    direct = IDS.replace("self.tokens.embed(ids)", "self.tokens.table(ids)")  # the member's torch module
    assert [m[:2] for m in marks(direct)] == [("IPF103", 18)]
    assert saved_error(HEADER + direct)
    # the member's module is one of two kinds: not followed (an nn.Identity saves nothing)
    either = direct.replace("self.table = nn.Embedding(12, 4)",
                            "self.table = nn.Embedding(12, 4) if big else nn.Identity()").replace(
        "class Tokens(nn.Module):\n    def __init__(self):", "class Tokens(nn.Module):\n    def __init__(self, big=True):")
    assert not [m for m in marks(either) if m[0] == "IPF103"]


MEMBER_CONTROLS = {
    # the member's method saves nothing of its argument (reads only its shape)
    "shape_only": """\
class Noise(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(4))

    def sample(self, h):
        return torch.zeros(h.shape) + self.scale


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.noise = Noise()
        self.inp = nn.Linear(4, 4)

    def forward(self, x):
        h = self.inp(x)
        n = self.noise.sample(h)
        h.mul_(0.5)
        return (n + h).sum()


def main():
    m = Model()
    m(torch.randn(3, 4)).backward()
    return {k: p.grad for k, p in m.named_parameters()}
""",
    # the member may be one of two classes: not followed
    "either": """\
class A(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def score(self, h):
        return self.proj(h)


class B(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(4))

    def score(self, h):
        return torch.zeros(h.shape) * self.w


class Model(nn.Module):
    def __init__(self, kind="b"):
        super().__init__()
        self.scorer = A() if kind == "a" else B()
        self.inp = nn.Linear(4, 4)

    def forward(self, x):
        h = self.inp(x)
        s = self.scorer.score(h)
        h.mul_(0.5)
        return (s + h).sum()


def main():
    m = Model()
    m(torch.randn(3, 4)).backward()
    return {k: p.grad for k, p in m.named_parameters()}
""",
}


def test_member_controls_run_and_stay_unproven():
    for name, body in MEMBER_CONTROLS.items():
        run(HEADER + textwrap.dedent(body))  # no error
        assert not [m for m in marks(body) if m[0] == "IPF103"], name


# ------------------------------------------------- group 3: layer lists built in a loop
# ``layers.append(make_act(kind))`` under ``if kind is not None:`` and then
# ``layers.append(nn.Dropout(p, inplace=True))``: the in-place dropout follows what the helper
# returns, when every module the helper can return saves its output (``nn.ReLU()``,
# ``nn.Sigmoid()``), on the path that appends it.
LAYERS = """\
def make_act(kind):
    act = None
    if kind == "relu":
        act = nn.ReLU()
    elif kind == "sigmoid":
        act = nn.Sigmoid()
    return act


class MLP(nn.Module):
    def __init__(self, sizes, act="{act}", p=0.5):
        super().__init__()
        layers = []
        for i in range(len(sizes) - 1):
            layers.append(nn.Linear(sizes[i], sizes[i + 1]))
            if act is not None:
                layers.append(make_act(act))
            layers.append(nn.Dropout(p, inplace=True))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def main():
    torch.manual_seed(0)
    m = MLP([3, 5, 2])
    x = torch.randn(4, 3)
    torch.manual_seed(1)
    m(x).pow(2).sum().backward()
    return {{n: p.grad for n, p in m.named_parameters()}}
"""


def test_an_in_place_dropout_after_a_helpers_activation_is_proven_and_fixed():
    for act in ("relu", "sigmoid"):
        body = LAYERS.format(act=act)
        assert marks(body) == [("IPF102", 18, "safe")], act
        source = HEADER + body
        assert saved_error(source), act
        got = run(fixed(body))
        want = run(source.replace("inplace=True", "inplace=False"))
        assert same(got, want), act


LAYER_CONTROLS = {
    # ELU(True) sets alpha, not inplace: its output is not saved; the helper may return either
    "mixed": LAYERS.replace("nn.Sigmoid()", "nn.ELU(True)").format(act="sigmoid"),
    # the helper returns a module of this file the join does not follow
    "own_class": """\
class Scale(nn.Module):
    def forward(self, x):
        return x * 2.0


def make_act(kind):
    return Scale()


class MLP(nn.Module):
    def __init__(self, sizes, act="scale", p=0.5):
        super().__init__()
        layers = []
        for i in range(len(sizes) - 1):
            layers.append(nn.Linear(sizes[i], sizes[i + 1]))
            if act is not None:
                layers.append(make_act(act))
            layers.append(nn.Dropout(p, inplace=True))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def main():
    m = MLP([3, 5, 2])
    m(torch.randn(4, 3)).pow(2).sum().backward()
    return {n: p.grad for n, p in m.named_parameters()}
""",
    # an if/else before the dropout: which layer precedes it is not one statement
    "else": """\
class MLP(nn.Module):
    def __init__(self, sizes, act=None, p=0.5):
        super().__init__()
        layers = []
        for i in range(len(sizes) - 1):
            layers.append(nn.Linear(sizes[i], sizes[i + 1]))
            if act is not None:
                layers.append(nn.Sigmoid())
            else:
                layers.append(nn.Identity())
            layers.append(nn.Dropout(p, inplace=True))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def main():
    m = MLP([3, 5, 2])
    m(torch.randn(4, 3)).pow(2).sum().backward()
    return {n: p.grad for n, p in m.named_parameters()}
""",
}


def test_layer_list_controls_run_and_stay_unproven():
    for name, body in LAYER_CONTROLS.items():
        run(HEADER + textwrap.dedent(body))  # no error
        assert not [m for m in marks(body) if m[0] == "IPF102"], name


# ------------------------------------------------- group 4: two slices of one tensor, one version counter
# ``xa, xb = x[:, :d], x[:, d:]`` (a coupling layer's split): an op saves ``xa``, then ``xb`` is
# written in place. The slices share no memory, but they share ``x``'s version counter, so the
# write breaks what was saved of ``xa``.
COUPLING = """\
class Coupling(nn.Module):
    def __init__(self, d=2):
        super().__init__()
        self.d = d
        self.inp = nn.Linear(4, 4)
        self.net = nn.Linear(d, 4 - d)

    def forward(self, x):
        h = self.inp(x)
        ha, hb = h[:, :self.d], h[:, self.d:]
        hb += self.net(ha)
        return torch.cat([ha, hb], 1)


def main():
    m = Coupling()
    m(torch.randn(3, 4)).pow(2).sum().backward()
    return {n: p.grad for n, p in m.named_parameters()}
"""


def test_a_write_into_one_slice_after_its_sibling_was_saved_is_proven():
    assert [m[:2] for m in marks(COUPLING)] == [("IPF101", 11)]
    source = HEADER + COUPLING
    assert saved_error(source)
    got = run(HEADER + fixed_unsafe(COUPLING))
    want = run(source.replace("hb += self.net(ha)", "hb = hb + self.net(ha)"))
    assert same(got, want)


def fixed_unsafe(body: str) -> str:
    result = process_source((HEADER + textwrap.dedent(body)).encode(), "case.py", Settings(unsafe_fixes=True), fix=True)
    assert result.error is None and result.changed, result.findings
    return result.fixed[len(HEADER):]


SLICE_CONTROLS = {
    # slices of two different tensors
    "two_bases": COUPLING.replace("ha, hb = h[:, :self.d], h[:, self.d:]",
                                  "ha, hb = h[:, :self.d], x[:, self.d:].clone()"),
    # the sibling is read only by an op that saves nothing of it (an addition)
    "unsaved": COUPLING.replace("hb += self.net(ha)", "hb += ha + 1.0"),
    # an index that copies (a list of columns), not a view
    "copy": COUPLING.replace("ha, hb = h[:, :self.d], h[:, self.d:]", "ha, hb = h[:, [0, 1]], h[:, self.d:]"),
    # the sibling is rebound (to a copy) before it is saved
    "rebound": COUPLING.replace("hb += self.net(ha)", "ha = ha.clone()\n        hb += self.net(ha)"),
}


def test_slice_controls_run_and_stay_unproven():
    for name, body in SLICE_CONTROLS.items():
        run(HEADER + body)  # no error
        assert not [m for m in marks(body) if m[0] == "IPF101"], name
