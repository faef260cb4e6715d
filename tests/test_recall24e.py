"""Issue 24 (recall, rec24e): in-place modules and ops writing into a value whose producer saved
it, where the producer is a chain of layers the analysis did not follow.

- ``nn.Sequential(*layers)`` of a list the constructor builds with ``append`` / ``extend`` (a
  loop adding ``[Linear, BatchNorm, act]`` per hidden layer): the last layer added decides what
  the chain's output is, when the adds that put it last run on every path.
- ``self.unit`` set to different chains on the branches of an ``if`` (``Sequential(conv, bn,
  act)`` or ``Sequential(conv, act)``): a save is proven where every branch's chain makes it.

Each shape is a small program written from the pattern; torch runs it to show the hazard is
real (backward raises), and the default fix's program to show its gradients match an
out-of-place control. Negative controls from the same shapes stay unproven.
"""

from __future__ import annotations

import textwrap

import torch

from codemod.config import Settings
from codemod.engine.pipeline import process_source

from .backward import raises_at_backward

HEADER = "import torch\nimport torch.nn as nn\n\n\n"


def findings(body: str, select=("IPF1",)):
    source = HEADER + textwrap.dedent(body)
    result = process_source(source.encode(), "case.py", Settings(select=select))
    assert result.error is None, result.error
    offset = HEADER.count("\n")
    return [(f.code, f.span.line - offset) for f in result.findings]


def run(source: str, build: str, shape) -> dict:
    space: dict = {}
    exec(compile(source, "case.py", "exec"), space)
    torch.manual_seed(0)
    model = eval(build, space)
    model.train()
    torch.manual_seed(1)
    model(torch.randn(*shape)).pow(2).sum().backward()
    return {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


def fixed_matches_control(body: str, build: str, shape, control, unsafe: bool = False) -> None:
    """The original dies at backward; the default fix (``unsafe``: the unsafe tier's, where the
    default tier cannot show the result is the caller's alone) runs and gives the control's
    gradients."""
    source = HEADER + textwrap.dedent(body)
    assert raises_at_backward(lambda: run(source, build, shape))
    if unsafe:
        default = process_source(source.encode(), "case.py", Settings(), fix=True)
        assert default.error is None and not default.changed
        assert any(f.reason == "held-elsewhere" for f in default.findings)
    result = process_source(source.encode(), "case.py", Settings(unsafe_fixes=unsafe), fix=True)
    assert result.error is None and result.changed
    got = run(result.fixed, build, shape)
    want = run(control(source), build, shape)
    assert got.keys() == want.keys() and got
    assert all(torch.allclose(got[k], want[k]) for k in got)


# ----------------------------------------------------------------- Sequential(*layers)
EXTENDED = """\
class Head(nn.Module):
    def __init__(self, dims, p=0.2):
        super().__init__()
        act = nn.ReLU(inplace=True)
        layers = []
        for i in range(len(dims) - 1):
            layers.extend([nn.Linear(dims[i], dims[i + 1]), nn.BatchNorm1d(dims[i + 1]), act])
        self.mlp = nn.Sequential(*layers)
        self.drop = nn.Dropout(p, inplace=True)

    def forward(self, x):
        return self.drop(self.mlp(x))
"""

APPENDED = """\
class Gate(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        layers = [nn.Identity()]
        for a, b in zip(sizes[:-1], sizes[1:]):
            layers.append(nn.Linear(a, b))
            layers.append(nn.Sigmoid())
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        g = self.net(x)
        g *= 2.0
        return g
"""


def test_a_chain_spread_from_a_list_built_in_a_loop_is_followed_to_its_last_layer():
    assert findings(EXTENDED) == [("IPF102", 9)]
    assert findings(APPENDED) == [("IPF101", 12)]
    fixed_matches_control(EXTENDED, "Head([4, 6, 3])", (5, 4),
                          lambda s: s.replace("self.drop(self.mlp(x))", "self.drop(self.mlp(x).clone())"))
    # Whether the chain's members keep its result (a module that stores what it returns) is not
    # seen through `nn.Sequential(*layers)`: held-elsewhere, the unsafe tier (review34).
    fixed_matches_control(APPENDED, "Gate([4, 6, 3])", (5, 4),
                          lambda s: s.replace("g = self.net(x)", "g = self.net(x).clone()"), unsafe=True)


def test_a_chain_whose_last_layer_is_not_known_on_every_path_stays_unproven():
    # the last layer saves only its input: nothing of the output is saved
    last_linear = EXTENDED.replace("nn.BatchNorm1d(dims[i + 1]), act]", "act, nn.Linear(dims[i + 1], dims[i + 1])]")
    assert findings(last_linear) == []
    source = HEADER + last_linear
    run(source, "Head([4, 6, 3])", (5, 4))  # runs
    # the saving layer is added on one branch only, or after an add that runs on one branch only
    gated = APPENDED.replace("            layers.append(nn.Sigmoid())",
                             "            if b > 1:\n                layers.append(nn.Sigmoid())")
    assert findings(gated) == []
    after_if = APPENDED.replace("            layers.append(nn.Sigmoid())",
                                "            if b > 1:\n                layers.append(nn.Linear(b, b))\n"
                                "            layers.append(nn.Dropout(0.1, inplace=True))")
    assert findings(after_if) == []
    # the list is handed to someone else before the chain is built: its order is unknown
    handed = APPENDED.replace("        self.net = nn.Sequential(*layers)",
                              "        extend_with_head(layers)\n        self.net = nn.Sequential(*layers)")
    assert findings(handed) == []
    # an in-place dropout after a layer saving nothing of its output
    dropout = EXTENDED.replace("nn.ReLU(inplace=True)", "nn.ReLU6(inplace=True)")
    assert findings(dropout) == []
    run(HEADER + dropout, "Head([4, 6, 3])", (5, 4))  # runs


# ----------------------------------------------------------------- a chain set on branches
BRANCHES = """\
class CBR(nn.Module):
    def __init__(self, cin, cout, with_bn=True):
        super().__init__()
        conv = nn.Conv2d(cin, cout, 3, padding=1)
        if with_bn:
            self.unit = nn.Sequential(conv, nn.BatchNorm2d(cout), nn.ReLU(inplace=True))
        else:
            self.unit = nn.Sequential(conv, nn.ReLU(inplace=True))

    def forward(self, x):
        return self.unit(x)


class Net(nn.Module):
    def __init__(self, with_bn=True):
        super().__init__()
        self.body = CBR(3, 4, with_bn)
        self.drop = nn.Dropout2d(p=0.1, inplace=True)
        self.cls = nn.Conv2d(4, 2, 1)

    def forward(self, x):
        x = self.body(x)
        x = self.drop(x)
        return self.cls(x)
"""


def test_a_module_set_on_branches_proves_what_every_branch_saves():
    assert findings(BRANCHES) == [("IPF102", 18)]
    control = lambda s: s.replace("x = self.drop(x)", "x = self.drop(x.clone())")  # noqa: E731
    fixed_matches_control(BRANCHES, "Net()", (2, 3, 6, 6), control)
    fixed_matches_control(BRANCHES, "Net(with_bn=False)", (2, 3, 6, 6), control)


def test_a_module_set_on_branches_that_differ_in_what_they_save_stays_unproven():
    one_saves = BRANCHES.replace("self.unit = nn.Sequential(conv, nn.ReLU(inplace=True))",
                                 "self.unit = nn.Sequential(conv, nn.ReLU6(inplace=True))")
    # (stop 58: where every construction of the file takes one branch, that branch is what runs: `Net()`
    # alone builds the BN + ReLU unit, which raises, and is proven; built both ways, neither is known)
    assert findings(one_saves) == [("IPF102", 18)]
    both = one_saves + "\n\ndef build():\n    return Net(), Net(with_bn=False)\n"
    assert findings(both) == []
    source = HEADER + one_saves
    assert raises_at_backward(lambda: run(source, "Net()", (2, 3, 6, 6)))
    run(source, "Net(with_bn=False)", (2, 3, 6, 6))  # the other branch runs


# ----------------------------------------------------------------- a loop over every member
# `for conv in self.convs: fea = conv(x)...`: every member of the ModuleList runs, so the output
# is saved on the turn of a member that saves it (its last layer a sigmoid), whatever the others do.
MEMBERS = """\
class Gated(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.fc = nn.Linear(c, c)
        self.act = nn.Sigmoid()

    def forward(self, x):
        return self.act(self.fc(x))


class Select(nn.Module):
    def __init__(self, c=4, m=3):
        super().__init__()
        gate = Gated(c)
        self.branches = nn.ModuleList([])
        for i in range(m):
            if i == 0:
                self.branches.append(gate)
            else:
                self.branches.append(nn.Sequential(nn.Linear(c, c), gate))
        self.plain = nn.ModuleList([nn.Linear(c, c) for _ in range(m)])

    def forward(self, x):
        feas = []
        for i, branch in enumerate(self.branches):
            fea = branch(x)
            fea.mul_(2.0)
            feas.append(fea)
        return torch.stack(feas, 1).sum(1)
"""


def test_a_loop_over_every_member_of_a_module_list_proves_a_save_of_one_member():
    assert findings(MEMBERS) == [("IPF103", 27)]
    # A member's own `self.act` is not shown to keep nothing of what it returns: unsafe tier.
    fixed_matches_control(MEMBERS, "Select()", (5, 4),
                          lambda s: s.replace("fea = branch(x)", "fea = branch(x).clone()"), unsafe=True)


def test_a_loop_that_may_skip_a_member_or_members_that_save_nothing_stay_unproven():
    for changed in (
        MEMBERS.replace("            fea = branch(x)\n", "            if i == 0:\n                continue\n"
                        "            fea = branch(x)\n"),  # a turn may be left before the call
        MEMBERS.replace("            fea = branch(x)\n            fea.mul_(2.0)",
                        "            if i > 0:\n                fea = branch(x)\n                fea.mul_(2.0)"),
        MEMBERS.replace("        self.act = nn.Sigmoid()", "        self.act = nn.Identity()"),
        MEMBERS.replace("enumerate(self.branches)", "enumerate(self.plain)"),
        MEMBERS.replace("                self.branches.append(gate)", "                self.branches.append(make())"),
    ):
        assert findings(changed) == [], changed


# ----------------------------------------------------------------- the constructor fix's safety
# `y = self.act(x)` then `x + y`: in place, `x` holds the activation's result when read again;
# `inplace=False` would hand the later read the input as it was (the program computes something
# else). The fix of such a constructor is unsafe (`input-used-later`), like the functional form's.
REUSED = """\
class Res(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = nn.ReLU(inplace=True)

    def forward(self, h):
        x = self.fc(h)
        y = self.act(x)
        return x + y
"""


def test_a_constructor_whose_call_sites_read_the_input_again_is_unsafe_to_turn_off():
    source = HEADER + REUSED
    result = process_source(source.encode(), "case.py", Settings(select=("ALL",)))
    assert [(f.code, f.status.value, f.reason) for f in result.findings] == \
        [("IPF002", "unsafe", "input-used-later")]
    space: dict = {}
    exec(compile(source, "case.py", "exec"), space)
    torch.manual_seed(0)
    m = space["Res"]()
    h = torch.randn(3, 4)
    before = m(h)
    m.act.inplace = False
    assert not torch.allclose(before, m(h))  # turning it off changes what the program computes
    rebound = REUSED.replace("y = self.act(x)\n        return x + y", "x = self.act(x)\n        return x + h")
    result = process_source((HEADER + rebound).encode(), "case.py", Settings(select=("ALL",)))
    assert [(f.code, f.status.value) for f in result.findings] == [("IPF002", "safe")]


# ----------------------------------------------------------------- an in-place module on a view
# `a, b = torch.split(h, ...)`, then `self.act(b)` with `self.act = nn.ReLU(inplace=True)`: the
# module writes into an output of a function returning several views, which PyTorch refuses when
# it requires grad (error family C, at the write). The clone before the call keeps what the
# program reads afterwards (`b`, rectified, as the in-place module left it).
SPLIT = """\
class Distill(nn.Module):
    def __init__(self, c=8, keep=2):
        super().__init__()
        self.keep = keep
        self.conv = nn.Linear(c, c)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        h = self.conv(x)
        kept, rest = torch.split(h, (self.keep, h.shape[1] - self.keep), dim=1)
        out = self.act(rest)
        return torch.cat([kept, out + rest], 1)
"""


def test_an_in_place_module_called_on_a_view_pytorch_refuses_is_proven():
    assert findings(SPLIT) == [("IPF106", 11)]
    source = HEADER + SPLIT
    try:
        run(source, "Distill()", (3, 8))
    except RuntimeError as error:
        assert "is a view and is being modified inplace" in str(error)
    else:
        raise AssertionError("torch allowed the write")
    result = process_source(source.encode(), "case.py", Settings(), fix=True)
    assert result.changed and "rest = rest.clone()" in result.fixed
    want = run(source.replace("out = self.act(rest)", "rest = torch.relu(rest)\n        out = rest"), "Distill()", (3, 8))
    got = run(result.fixed, "Distill()", (3, 8))
    assert got.keys() == want.keys() and all(torch.allclose(got[k], want[k]) for k in got)


def test_a_module_that_may_not_run_in_place_on_a_view_is_not_a_view_write():
    for changed in (
        SPLIT.replace("nn.ReLU(inplace=True)", "nn.ReLU()"),
        SPLIT.replace("nn.ReLU(inplace=True)", "nn.Dropout(0.1, inplace=True)"),  # writes in training only
        SPLIT.replace("        self.act = nn.ReLU(inplace=True)",
                      "        self.act = nn.ReLU(inplace=True) if keep else nn.Tanh()"),
    ):
        assert findings(changed) == [], changed
