"""Second read of stop 35's code on main and of stop 36's branches (review36): soundness holes
shown by running real torch.

Each program works (its forward runs under ``torch.no_grad()``, or backward runs); the default
``fix`` must leave what it computes (outputs, final state) bit-identical, and a finding must be
proven only where the program fails at ``backward()``. The files are checked in a run whose
index shows every file (case.py and one other that imports nothing), as the safe forward-input
fix needs. Each test failed first on main (ec70a2c) or on the branch named at it."""

from __future__ import annotations

import pytest
import torch

from codemod.config import Settings
from tests.programs import assert_same_results, process_in_project, run_program


def _process(source: str, settings: Settings, fix: bool = False):
    return process_in_project(source, settings, fix)


_assert_same_results = assert_same_results


def _statuses(source: str):
    """(code, line, status, reason) of every finding of the default ``check``."""
    result = _process(source, Settings())
    return [(f.code, f.span.line, f.status.value, f.reason) for f in result.findings]


def _proven(source: str):
    """The proven findings (IPF1xx) of the default ``check``: (code, line)."""
    result = _process(source, Settings())
    return [(f.code, f.span.line) for f in result.findings if f.code.startswith("IPF1")]


def _backward_runs(source: str) -> bool:
    try:
        run_program(source)
    except RuntimeError as error:
        assert "inplace" in str(error), error
        return False
    return True


# ------------------------------------------------------- forward-input fix: instances reached unseen
RES_LIST = """\
import torch
import torch.nn as nn


class Res(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        x += self.fc(x)
        return x


class Net(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.proj = nn.Linear(3, 4)
        self.blocks = nn.ModuleList([Res(4) for _ in range(n)])

    def forward(self, inp):
        h = self.proj(inp)
        for blk in self.blocks:
            h = blk(h)
        return h

    def probe(self, inp):
        h = self.proj(inp)
        PROBE
        return h + y


def main():
    torch.manual_seed(0)
    net = Net(2)
    with torch.no_grad():
        x = torch.randn(5, 3)
        out = net(x)
        other = net.probe(x)
    return [out, other]
"""
RES_ATTRIBUTE = RES_LIST.replace("self.blocks = nn.ModuleList([Res(4) for _ in range(n)])", "self.block = Res(4)") \
    .replace("        for blk in self.blocks:\n            h = blk(h)\n        return h\n", "        return self.block(h)\n")

# Ways to reach a member other than through the attribute's name, each calling it on `h`,
# which the caller reads afterwards (`h + y`): in place, `h` is the block's output.
REACHED = {
    "list-children": (RES_LIST, "first = next(iter(self.blocks.children()))\n        y = first(h)"),
    "list-named_children": (RES_LIST, "y = dict(self.blocks.named_children())['0'](h)"),
    "getattr-list": (RES_LIST, "y = getattr(self, 'blocks')[0](h)"),
    "_modules": (RES_LIST, "y = self._modules['blocks'][0](h)"),
    "get_submodule": (RES_LIST, "y = self.get_submodule('blocks.0')(h)"),
    "modules": (RES_LIST, "first = [m for m in self.modules() if type(m).__name__ == 'Res'][0]\n        y = first(h)"),
    "owner-children": (RES_LIST, "y = list(self.children())[1][0](h)"),
    "getattr-attribute": (RES_ATTRIBUTE, "y = getattr(self, 'block')(h)"),
    "owner-named_children": (RES_ATTRIBUTE, "y = dict(self.named_children())['block'](h)"),
}


@pytest.mark.parametrize("way", sorted(REACHED))
def test_a_block_reached_other_than_by_its_attribute_keeps_its_in_place_write(way):
    """The forward-input fix is safe only where every call of the block is seen: a member
    reached through ``children()``, ``getattr``, ``_modules``, ``get_submodule`` or the owner's
    enumeration is called on a tensor the caller reads again, which sees the write in place."""
    source, probe = REACHED[way]
    _assert_same_results(source.replace("PROBE", probe))


@pytest.mark.parametrize("source", [RES_LIST, RES_ATTRIBUTE], ids=["list", "attribute"])
def test_a_decorated_forward_keeps_its_in_place_write(source):
    """A decorator on ``forward`` runs code the analysis does not follow with what the call is
    given (here it keeps the input): the write into it is seen there in place."""
    source = source.replace("class Res(nn.Module):", """SEEN = []


def remember(fn):
    def wrapper(self, x):
        SEEN.append(x)
        return fn(self, x)
    return wrapper


class Res(nn.Module):""").replace("    def forward(self, x):\n        x +=", "    @remember\n    def forward(self, x):\n        x +=") \
        .replace("        PROBE\n", "        y = h\n").replace("return [out, other]", "return [out, *SEEN]")
    _assert_same_results(source)


@pytest.mark.parametrize("source", [RES_LIST, RES_ATTRIBUTE], ids=["list", "attribute"])
def test_the_forward_input_fix_stays_safe_beside_an_init_loop(source):
    """Negative control: an init loop over ``self.modules()`` and ``self.apply(fn)`` that only
    inspect the members (``isinstance``, ``m.weight``) call none of them: the fix stays safe."""
    source = source.replace("        PROBE\n", "        y = h\n").replace("    def probe(self, inp):", """\
    def init(self):
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.zeros_(m.bias)
        self.apply(self._init_weights)

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, std=0.5)

    def probe(self, inp):""").replace("    net = Net(2)\n", "    net = Net(2)\n    net.init()\n")
    assert ("IPF101", 11, "safe", None) in _statuses(source), _statuses(source)
    _assert_same_results(source)


# ------------------------------------------------------------------ safe rebinding: aliases missed
FORWARD = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, inp):
        w = self.fc(inp)
        h = torch.sigmoid(w)
BODY


def main():
    torch.manual_seed(0)
    net = Net()
    with torch.no_grad():
        out = net(torch.randn(2, 3))
    return list(out)
"""

ONE_PATH_ALIASES = {
    # `d = h = d * 5` (both names) leaves `e`, bound to the tensor on one path, with the old one
    "both-names-if-else": """\
        d = h.exp_()
        if d.sum() > 0:
            e = d
        else:
            e = w
        d *= 5
        return [h, e]""",
    # the name bound on one path is the last binding in the `else`: `aliases` reads only that one
    "name-if-else": """\
        if h.sum() > 0:
            e = h
        else:
            e = w
        h *= 5
        return [h, e]""",
    "view-if-else": """\
        if h.sum() > 0:
            e = h[0]
        else:
            e = w[0]
        h *= 5
        return [h, e]""",
}


@pytest.mark.parametrize("body", sorted(ONE_PATH_ALIASES))
def test_a_name_bound_to_the_tensor_on_one_path_sees_the_write(body):
    """``e = h`` (or ``e = h[0]``) in an ``if`` whose ``else`` binds ``e`` to something else:
    on that path ``e`` is the tensor written in place. ``Dataflow.aliases`` reads only the last
    binding in source order (the ``else``'s), so the rebinding fix is safe, and ``e`` keeps the
    old values after it."""
    _assert_same_results(FORWARD.replace("BODY", ONE_PATH_ALIASES[body]))


def test_the_result_of_an_in_place_method_on_a_view_expression_is_that_view():
    """``d = h.t().exp_()``: ``d`` is the transpose of ``h`` (the in-place method returns its
    receiver). ``d *= 5`` reaches ``h`` in place; ``d = d * 5`` does not."""
    _assert_same_results(FORWARD.replace("BODY", """\
        d = h.t().exp_()
        d *= 5
        return [h, d.t()]"""))


# -------------------------------------------- proven in-place modules whose attribute is replaced
LONE_ACT = """\
import torch
import torch.nn as nn


class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        h = torch.sigmoid(self.fc(x))
        return self.act(h)


def main():
    torch.manual_seed(0)
    net = Base()
    CHANGE
    out = net(torch.randn(2, 3))
    out.sum().backward()
    return [out.detach(), net.fc.weight.grad]
"""
SUB_ACT = LONE_ACT.replace("""    def forward(self, x):""", """

class Sub(Base):
    def __init__(self):
        super().__init__()
        SUBCHANGE

    def forward(self, x):""").replace("net = Base()", "net = Sub()")

REPLACED = {
    "outside": LONE_ACT.replace("CHANGE", "net.act = nn.ReLU()"),
    "add_module": LONE_ACT.replace("CHANGE", "net.add_module('act', nn.ReLU())"),
    "setattr": LONE_ACT.replace("CHANGE", "setattr(net, 'act', nn.Identity())"),
    "subclass-outside": SUB_ACT.replace("        SUBCHANGE\n", "").replace("CHANGE", "net.act = nn.ReLU()"),
    "subclass-setattr": SUB_ACT.replace("SUBCHANGE", "setattr(self, 'act', nn.ReLU())").replace("    CHANGE\n", ""),
}


@pytest.mark.parametrize("how", sorted(REPLACED))
def test_an_in_place_module_replaced_after_it_is_built_is_no_proven_hazard(how):
    """``self.act = nn.ReLU(inplace=True)`` replaced before any call (``net.act = nn.ReLU()``,
    ``add_module``, ``setattr``): the calls run the new module, backward runs, yet the
    constructor's flag is proven a hazard at ``self.act(h)`` (and in subclasses, 4ee478b)."""
    source = REPLACED[how]
    assert _backward_runs(source)
    assert not _proven(source), _proven(source)


@pytest.mark.parametrize("source", [LONE_ACT.replace("    CHANGE\n", ""),
                                    SUB_ACT.replace("        SUBCHANGE\n", "").replace("    CHANGE\n", "")],
                         ids=["lone", "subclass"])
def test_the_in_place_module_control_is_a_proven_hazard(source):
    assert not _backward_runs(source)
    assert _proven(source)


# ------------------------------------------------------------ helpers that keep what they are given
KEEPING_HELPERS = {
    # a generator function's frame keeps its arguments until it is exhausted
    "generator-function": ("""\
def rows(t):
    for row in t:
        yield row * 1
""", "rows(h)"),
    # a generator expression keeps the iterator over its first iterable
    "generator-expression": ("""\
def later(t):
    return (r * 1 for r in t)
""", "later(h)"),
}


@pytest.mark.parametrize("helper", sorted(KEEPING_HELPERS))
def test_a_helper_returning_a_generator_over_its_argument_keeps_it(helper):
    """``g = rows(h); h += 1; list(g)``: the generator reads ``h`` after the write, in place the
    new values. ``kept.argument_kept`` counts stores, calls and closures, not a generator's
    frame, so ``h = h + 1`` was safe and the generator read the old tensor."""
    code, call = KEEPING_HELPERS[helper]
    source = FORWARD.replace("class Net(nn.Module):", code + "\n\nclass Net(nn.Module):").replace("BODY", f"""\
        g = {call}
        h += 1
        return [h, *list(g)]""")
    _assert_same_results(source)


def test_a_helper_consuming_a_generator_over_its_argument_at_once_keeps_nothing():
    """Negative control: ``sum(r.sum() for r in t)`` runs the generator to its end inside the
    helper; ``h += 1`` after ``s = total(h)`` keeps its safe fix."""
    source = FORWARD.replace("class Net(nn.Module):", """\
def total(t):
    return sum(r.sum() for r in t)


class Net(nn.Module):""").replace("BODY", """\
        s = total(h)
        h += 1
        return [h, s.reshape(1)]""").replace(  # (grad on: a forward run only under no_grad is no candidate, stop 57)
        "    with torch.no_grad():\n        out = net(torch.randn(2, 3))", "    out = net(torch.randn(2, 3))")
    assert ("IPF101", 18, "safe", None) in _statuses(source), _statuses(source)
    _assert_same_results(source)


# ------------------------------------------------------------------------- fix24d (branch, 11a0448)
HOOKED_TEMPORARY = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.act = nn.Sigmoid()
        self.feats = []
        self.act.register_forward_hook(lambda m, i, o: self.feats.append(o))

    def forward(self, inp):
        w = self.fc(inp)
        fea = self.act(w).mul_(2)
        return [fea, *self.feats]


def main():
    torch.manual_seed(0)
    net = Net()
    with torch.no_grad():
        out = net(torch.randn(2, 3))
    return list(out)
"""


def test_a_module_result_kept_by_a_forward_hook_is_no_fresh_temporary():
    """``fea = self.act(w).mul_(2)``: a forward hook of ``self.act`` keeps its output (feature
    extraction), which the in-place ``mul_`` doubles; the twin ``self.act(w).mul(2)`` leaves the
    hook's tensor undoubled. ``fresh_temporary`` asks ``result_kept`` (the module's own code)
    but not the file's hooks (``arguments._hooked``)."""
    _assert_same_results(HOOKED_TEMPORARY)


# ------------------------------------------------------- main: a hazard only from a loop's 2nd turn
ONE_BLOCK = """\
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        x += 1
        return torch.sigmoid(self.fc(x))


class Net(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.proj = nn.Linear(3, 4)
        self.blocks = nn.ModuleList([Block() for _ in range(n)])

    def forward(self, inp):
        h = self.proj(inp)
        for blk in self.blocks:
            h = blk(h)
        return h


def main():
    torch.manual_seed(0)
    net = Net(1)
    out = net(torch.randn(2, 3))
    out.sum().backward()
    return [out.detach(), net.proj.weight.grad]
"""


def test_a_hazard_reached_only_from_a_loops_second_turn_is_not_proven():
    """``for blk in self.blocks: h = blk(h)`` whose block writes into its input: the input is a
    saved tensor (the previous block's sigmoid output) only from the second turn. With one block
    (``Net(1)``) backward runs; the analysis cannot see how many turns run, so the write is at
    most possible (``h = self.proj(inp)``, the first turn's input, is saved by nothing)."""
    assert _backward_runs(ONE_BLOCK)
    assert not _proven(ONE_BLOCK), _proven(ONE_BLOCK)


def test_the_replacing_place_named_is_the_first_the_walk_meets():
    """Two places may replace ``self.act`` (``add_module`` at line 27, a computed ``setattr`` at
    line 29): the reason names the one the module walk meets first (line 29), as it did when
    ``_replaced`` walked the module; it now reads the calls from the module's mentions."""
    source = LONE_ACT.replace("    CHANGE\n", "    net.add_module('act', nn.ReLU())\n    if out_of_band():\n"
                              "        setattr(net, name_of(), nn.Identity())\n").replace(
        "def main():", "def out_of_band():\n    return False\n\n\ndef name_of():\n    return 'act'\n\n\ndef main():")
    assert source.splitlines()[26].strip().startswith("net.add_module") and "setattr" in source.splitlines()[28]
    reasons = [f.message for f in _process(source, Settings(select=("ALL",))).findings if "is replaced" in f.message]
    assert reasons and all("unless `self.act` is replaced (line 29) before it runs" in r for r in reasons), reasons


@pytest.mark.parametrize("layers", ["[Block() for _ in range(3)]", "[Block(), Block()]"])
def test_a_hazard_from_a_loops_second_turn_stays_proven_where_the_loop_is_seen_to_run_twice(layers):
    """The control of the test above: the layers' number is seen (a comprehension over
    ``range(3)``, two written out), so the second turn runs and backward raises."""
    source = ONE_BLOCK.replace("[Block() for _ in range(n)]", layers)
    assert not _backward_runs(source)
    assert [code for code, _ in _proven(source)] == ["IPF101"], _proven(source)


RECURRENT = """\
import torch


def run(w):
    h = torch.ones(3)
    for _ in STEPS:
        h.mul_(2)
        h = torch.sigmoid(h * w)
    return h


def main():
    w = torch.ones(3, requires_grad=True)
    out = run(w)
    out.sum().backward()
    return [out.detach(), w.grad]
"""


@pytest.mark.parametrize("steps, proven", [("range(1)", False), ("[0]", False), ("range(2)", True),
                                           ("(0, 1, 2)", True)])
def test_a_write_into_the_last_turns_output_is_proven_only_where_two_turns_are_seen(steps, proven):
    """``h.mul_`` writes into the sigmoid output of the turn before: a hazard from the loop's
    second turn on (``h * w`` saved the ``h`` of its own turn, which the next turn no longer
    writes). The loop's length is seen here: one turn works, two raise."""
    source = RECURRENT.replace("STEPS", steps)
    assert _backward_runs(source) is not proven
    assert bool(_proven(source)) is proven, _proven(source)


SAVED_LATER_IN_THE_TURN = """\
import torch


def run(w, steps):
    h = torch.ones(3)
    total = 0
    for _ in steps:
        h.mul_(2)
        total = total + (h * w).sum()
    return total


def main():
    w = torch.ones(3, requires_grad=True)
    out = run(w, range(1))
    out.backward()
    return [out.detach(), w.grad]
"""


def test_a_save_later_in_the_turn_is_broken_only_from_the_second_turn():
    """``h * w`` saves ``h`` after the write; the next turn's write breaks it. The loop runs
    over the caller's ``steps`` (one turn here): possible, not proven."""
    assert _backward_runs(SAVED_LATER_IN_THE_TURN)
    assert not _proven(SAVED_LATER_IN_THE_TURN), _proven(SAVED_LATER_IN_THE_TURN)
    two = SAVED_LATER_IN_THE_TURN.replace("for _ in steps:", "for _ in range(2):")
    assert not _backward_runs(two)
    assert _proven(two), _statuses(two)
