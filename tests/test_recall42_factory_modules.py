"""Family A: modules built by factories (issue 24, stop 42).

A module attribute is often bound to what a builder returns, not to a construction written in
place: ``self.act = get_act(name)`` of another file of the project, ``self.drop =
self.__dropout()`` (a private method choosing ``nn.Dropout2d`` or ``nn.Dropout3d``), a static or
class method, a method returning an ``nn.Sequential``. Where every ``return`` of the builder
hands back a torch module built there (conditional expressions, ``if``/``else`` branches, a
name bound to one, a dict display indexed by a key), the attribute stands for the set of
those modules (``analysis.factories``): what calling it saves is what each of them saves, and
an in-place module built there writes at the calls of the attribute its builder's result is
bound to. The flag of a module the builder builds from its own parameter (``inplace=inplace``)
is what the call of the builder passes, or its default.

Every program is new (none is a corpus case); each original dies in backward where the fact is
proven, each look-alike runs and stays unproven.
"""

from __future__ import annotations

import textwrap

import pytest
import torch

from codemod.config import Settings
from tests.programs import fixed_source, process_in_project, raises_inplace, run_program
from tests.test_recall39_callers import _findings, _fix, _gradients, _line, _project


def _proven(source: str) -> list:
    return [(f.code, f.span.line) for f in process_in_project(source, Settings()).findings
            if f.code.startswith("IPF1")]


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _same_gradients(fixed: str, want: str) -> None:
    got, expected = run_program(fixed), run_program(want)
    assert len(got) == len(expected) and all(torch.equal(g, w) for g, w in zip(got, expected))


# ---------------------------------------------------------------- a private method builds the dropout

UNET_BLOCK = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def get_act(name):
        if name == "relu":
            return nn.ReLU(inplace=True)
        return nn.LeakyReLU(0.1, inplace=True)


    class ConvBlock(nn.Module):
        def __init__(self, cin, cout, activation="leaky", p=0.2, is_3d=False):
            super().__init__()
            self.p = p
            self.is_3d = is_3d
            self.conv = nn.Conv2d(cin, cout, 3, padding=1)
            self.norm = nn.BatchNorm2d(cout)
            self.act = {act}
            self.drop = self.__dropout()

        def __dropout(self):
            return nn.Dropout2d(self.p, inplace=True) if {test} else nn.Dropout3d(self.p, inplace=True)

        def forward(self, x):
            x = self.drop(self.act(self.norm(self.conv(x))))
            return x


    def main():
        torch.manual_seed(0)
        block = ConvBlock(1, 3)
        block(torch.randn(2, 1, 5, 5)).sum().backward()
        return [p.grad for p in block.parameters()]
""")


@pytest.mark.parametrize("test, proven", [
    ("self.is_3d is False", ["Dropout2d", "Dropout3d"]),  # undecided: either may be built, each writes at the call
    ("not self.is_3d", ["Dropout2d"]),  # no construction passes is_3d: the 3-D branch is never built
], ids=["undecided", "decided"])
def test_a_dropout_built_by_a_private_method_writes_into_what_the_activation_saved(test, proven):
    """``self.drop = self.__dropout()``: the in-place dropout its conditional return builds runs
    at ``self.drop(...)``, on the output of an in-place ReLU/LeakyReLU (``get_act``: each saves
    its result)."""
    source = UNET_BLOCK.replace("{act}", "get_act(activation)").replace("{test}", test)
    assert raises_inplace(source)
    lines = [_line_of(source, "return nn.Dropout2d")] * len(proven)
    assert _proven(source) == [("IPF102", line) for line in lines]
    fixed = fixed_source(source, project=True)
    assert "nn.Dropout2d(self.p, inplace=False)" in fixed
    _same_gradients(fixed, source.replace("inplace=True) if", "inplace=False) if")
                    .replace("Dropout3d(self.p, inplace=True)", "Dropout3d(self.p, inplace=False)"))


@pytest.mark.parametrize("act", ["nn.GELU()", "self.__act()"], ids=["gelu", "method-with-gelu-branch"])
def test_a_private_dropout_after_an_activation_that_saves_its_input_is_no_proof(act):
    """The layer before the dropout saves its input (GELU), or may (a builder one of whose
    branches builds a GELU): the dropout's write breaks nothing proven."""
    source = UNET_BLOCK.replace("{act}", act).replace("{test}", "not self.is_3d").replace(
        "    def forward(self, x):",
        "    def __act(self):\n        return nn.GELU() if self.p > 0.1 else nn.ReLU(inplace=True)\n\n"
        "    def forward(self, x):")
    run_program(source)  # it runs (p = 0.2: the GELU)
    assert _proven(source) == []


def test_a_builder_that_turns_the_flag_off_proves_nothing():
    """``d = nn.Dropout2d(p, inplace=True); d.inplace = False; return d``: the module built does
    not run in place."""
    source = UNET_BLOCK.replace("{act}", "get_act(activation)").replace(
        "        return nn.Dropout2d(self.p, inplace=True) if {test} else nn.Dropout3d(self.p, inplace=True)",
        "        d = nn.Dropout2d(self.p, inplace=True)\n        d.inplace = False\n        return d")
    run_program(source)
    assert _proven(source) == []


# ---------------------------------------------------------------- static and class methods, Sequential

GATED = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class GatedResidual(nn.Module):
        def __init__(self, dim, kind="sigmoid"):
            super().__init__()
            self.fc = nn.Linear(dim, dim)
            self.gate = self.make_gate(kind)

        @staticmethod
        def make_gate(kind):
            if kind == "sigmoid":
                gate = nn.Sigmoid()
            else:
                gate = {other}
            return gate

        def forward(self, x):
            h = self.gate(self.fc(x))
            h += x
            return h


    def main():
        torch.manual_seed(0)
        net = nn.Sequential(GatedResidual(4), GatedResidual(4, kind="other"))
        net(torch.randn(3, 4)).sum().backward()
        return [p.grad for p in net.parameters()]
""")


def test_a_static_builder_whose_every_branch_saves_its_output():
    source = GATED.replace("{other}", "nn.Tanh()")
    assert raises_inplace(source)
    assert _proven(source) == [("IPF101", _line_of(source, "h += x"))]
    fixed = fixed_source(source, project=True)
    assert "h = h + x" in fixed
    _same_gradients(fixed, source.replace("h += x", "h = h + x"))


@pytest.mark.parametrize("other", ["nn.GELU()", "registry[kind]()", "kind"], ids=["gelu", "unknown", "argument"])
def test_a_static_builder_with_a_branch_not_saving_its_output_proves_nothing(other):
    source = GATED.replace("{other}", other)
    if other == "nn.GELU()":
        assert raises_inplace(source)  # (the Sigmoid instance breaks; no fact is per instance)
    assert _proven(source) == []


TABLE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Decoder(nn.Module):
        def __init__(self, dim, kind="sigmoid"):
            super().__init__()
            self.proj = nn.Linear(dim, dim)
            self.act = self._output_act(kind)

        @classmethod
        def _output_act(cls, kind):
            return {"relu": nn.ReLU(), "sigmoid": nn.Sigmoid(), "tanh": {tanh}}[kind]

        def forward(self, z):
            y = self.act(self.proj(z))
            y.mul_(2.0)
            return y


    def main():
        torch.manual_seed(0)
        dec = Decoder(5)
        dec(torch.randn(3, 5)).sum().backward()
        return [p.grad for p in dec.parameters()]
""")


def test_a_class_method_returning_an_entry_of_a_dict_of_modules():
    source = TABLE.replace("{tanh}", "nn.Tanh()")
    assert raises_inplace(source)
    assert _proven(source) == [("IPF103", _line_of(source, "y.mul_(2.0)"))]
    fixed = fixed_source(source, project=True)
    assert "y = y.mul(2.0)" in fixed
    _same_gradients(fixed, source.replace("y.mul_(2.0)", "y = y.mul(2.0)"))


def test_a_dict_entry_the_key_picks_decides_alone():
    """Every construction passes "sigmoid" (the default): only that entry is built and called;
    with a GELU entry the key never picks, the write is still proven; a key from outside may
    pick the GELU: unproven."""
    source = TABLE.replace("{tanh}", "nn.GELU()")
    assert [c for c, _ in _proven(source)] == ["IPF103"]
    unknown = source.replace("def main():", "def main(config={\"kind\": \"tanh\"}):").replace(
        "Decoder(5)", "Decoder(5, config[\"kind\"])")
    run_program(unknown)
    assert _proven(unknown) == []


STEM = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Backbone(nn.Module):
        def __init__(self, cin=3, c=4):
            super().__init__()
            self.stem = self._make_stem(cin, c)
            self.skip = nn.Conv2d(cin, c, 1)

        def _make_stem(self, cin, c):
            return nn.Sequential(nn.Conv2d(cin, c, 3, padding=1), nn.BatchNorm2d(c), {last})

        def forward(self, x):
            y = self.stem(x)
            y += self.skip(x)
            return y


    def main():
        torch.manual_seed(0)
        net = Backbone()
        net(torch.randn(2, 3, 6, 6)).sum().backward()
        return [p.grad for p in net.parameters()]
""")


def test_a_method_building_a_sequential_whose_end_saves_its_output():
    source = STEM.replace("{last}", "nn.ReLU(inplace=True)")
    assert raises_inplace(source)
    assert _proven(source) == [("IPF101", _line_of(source, "y += self.skip(x)"))]


def test_a_method_building_a_sequential_ending_in_a_norm_proves_nothing():
    source = STEM.replace(", {last})", ")")
    run_program(source)
    assert _proven(source) == []


# ---------------------------------------------------------------- a builder in another file of the project

ACTS = """\
import torch.nn as nn


def get_act(name, inplace=True):
    if name == "relu":
        return nn.ReLU(inplace=inplace)
    elif name == "leaky":
        return nn.LeakyReLU(0.1, inplace=inplace)
    elif name == "sigmoid":
        return nn.Sigmoid()
    raise ValueError(name)
"""

MODEL = """\
import torch
import torch.nn as nn

from acts import get_act


class Block(nn.Module):
    def __init__(self, dim, p=0.1):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.act = get_act("leaky"{passed})
        self.drop = self.__dropout(p)

    def __dropout(self, p):
        return nn.Dropout(p, inplace=True)

    def forward(self, x):
        return self.drop(self.act(self.fc(x)))


def compute():
    torch.manual_seed(0)
    block = Block(4)
    block(torch.randn(3, 4)).sum().backward()
    return [p.grad.tolist() for p in block.parameters()]
"""


@pytest.mark.parametrize("names", [["model.py", "acts.py"], ["."]], ids=["files", "folder"])
def test_an_activation_built_in_another_file_feeds_the_in_place_dropout(tmp_path, names):
    """``get_act`` of ``acts.py``: each module it may build saves its result (the in-place
    LeakyReLU and ReLU by the flag's default, the Sigmoid): the dropout overwrites it. Seen from
    the project's index (both files, or their folder); the model's file checked alone does not
    see ``acts.py`` (a sibling is no installed library): nothing proven there."""
    files = {"acts.py": ACTS, "model.py": MODEL.replace("{passed}", "")}
    _project(tmp_path, files)
    at = _line(tmp_path, "model.py", "return nn.Dropout(p, inplace=True)")
    assert [f for f in _findings(tmp_path, ["model.py"]) if f[2].startswith("IPF1")] == []
    found = [f for f in _findings(tmp_path, names) if f[2].startswith("IPF1")]
    assert [(f[0], f[1], f[2], f[3]) for f in found] == [("model.py", at, "IPF102", "safe")], found
    assert _gradients(tmp_path) is None
    _fix(tmp_path, names)
    assert "nn.Dropout(p, inplace=False)" in (tmp_path / "model.py").read_text()
    fixed = _gradients(tmp_path)
    _project(tmp_path, {"model.py": MODEL.replace("{passed}", "").replace("inplace=True", "inplace=False")})
    assert fixed is not None and fixed == _gradients(tmp_path)


def test_an_activation_built_in_another_file_with_its_flag_turned_off_proves_nothing(tmp_path):
    """``get_act("leaky", inplace=False)``: a LeakyReLU out of place saves its input, not its
    result; the in-place dropout after it breaks nothing (it runs)."""
    files = {"acts.py": ACTS, "model.py": MODEL.replace("{passed}", ", inplace=False")}
    _project(tmp_path, files)
    assert [f for f in _findings(tmp_path, ["model.py", "acts.py"]) if f[2].startswith("IPF1")] == []
    assert _gradients(tmp_path) is not None


def test_a_builder_of_another_file_decided_by_its_own_default_is_read_for_every_name(tmp_path):
    """``get_act(name="relu")`` returning ``nn.ReLU(inplace=True) if name == "relu" else
    nn.GELU()``: its own file calls it nowhere, so its default would decide the test there; the
    model passes "gelu" (saves its input). Read for another file, every branch counts: a mix,
    unproven (it runs)."""
    acts = ACTS.replace('def get_act(name, inplace=True):', 'def get_act(name="relu"):\n'
                        '    return nn.ReLU(inplace=True) if name == "relu" else nn.GELU()\n\n\n'
                        'def unused(name, inplace=True):')
    files = {"acts.py": acts, "model.py": MODEL.replace('get_act("leaky"{passed})', 'get_act("gelu")')}
    _project(tmp_path, files)
    assert _gradients(tmp_path) is not None
    assert [f for f in _findings(tmp_path, ["model.py", "acts.py"]) if f[2].startswith("IPF1")] == []


TABLE_BUILDER = """\
import torch.nn as nn

_ACTS = {"relu": nn.ReLU, "elu": nn.ELU{more}}


def create_act(name="relu", inplace=True):
    return _ACTS[name](inplace=inplace)
"""

RESBLOCK = """\
import torch
import torch.nn as nn

from layers import create_act


class Block(nn.Module):
    def __init__(self, c, act="elu"):
        super().__init__()
        self.fc = nn.Linear(c, c)
        self.act = create_act(act)

    def forward(self, x):
        out = self.act(self.fc(x))
        out += x
        return out


def compute():
    torch.manual_seed(0)
    block = Block(4)
    block(torch.randn(3, 4)).sum().backward()
    return [p.grad.tolist() for p in block.parameters()]
"""


@pytest.mark.parametrize("more, proven", [("", True), (', "gelu": nn.GELU', False)], ids=["saving", "with-gelu"])
def test_a_builder_of_another_file_returning_a_class_of_its_table(tmp_path, more, proven):
    """``return _ACTS[name](inplace=inplace)``: every class of the table (the key is the
    caller's: every entry counts for another file), each in place by the flag's default; a
    table holding a GELU (saves its input) proves nothing."""
    _project(tmp_path, {"layers.py": TABLE_BUILDER.replace("{more}", more), "model.py": RESBLOCK})
    found = [f[2] for f in _findings(tmp_path, ["model.py", "layers.py"]) if f[2].startswith("IPF1")]
    assert found == (["IPF101"] if proven else [])
    assert _gradients(tmp_path) is None  # (the block asks for "elu" either way)


OVERRIDE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Base(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.fc = nn.Linear(dim, dim)
            self.act = self.{name}()

        def {name}(self):
            return nn.Sigmoid()

        def forward(self, x):
            h = self.act(self.fc(x))
            h += 1.0
            return h


    class Child(Base):
        def {name}(self):
            return nn.GELU()


    def main():
        torch.manual_seed(0)
        net = Child(4)
        net(torch.randn(3, 4)).sum().backward()
        return [p.grad for p in net.parameters()]
""")


@pytest.mark.parametrize("name, proven", [("make_act", False), ("__make_act", True)], ids=["overridden", "private"])
def test_a_builder_method_a_subclass_defines_again(name, proven):
    """A subclass of the file defines the builder again: ``self.make_act()`` in the base runs the
    subclass's for its instances (a GELU here: it runs), unproven; a private ``__make_act`` is
    name-mangled, the base's own runs for every instance (a Sigmoid: it dies)."""
    source = OVERRIDE.replace("{name}", name)
    assert raises_inplace(source) is proven
    assert [c for c, _ in _proven(source)] == (["IPF101"] if proven else [])


def test_a_builder_result_whose_call_relies_on_the_mutation_is_not_fixed_by_default():
    """``self.drop(x)`` as a statement, the dropout built by ``self.__dropout()``: the program
    relies on the write (turned off, the dropout would do nothing): proven, the fix unsafe."""
    source = UNET_BLOCK.replace("{act}", "get_act(activation)").replace("{test}", "not self.is_3d").replace(
        "        x = self.drop(self.act(self.norm(self.conv(x))))",
        "        x = self.act(self.norm(self.conv(x)))\n        self.drop(x)")
    assert raises_inplace(source)
    found = [f for f in process_in_project(source, Settings()).findings if f.code.startswith("IPF1")]
    assert [(f.code, f.status.value, f.reason) for f in found] == [("IPF102", "unsafe", "mutation-relied-on")]
    assert fixed_source(source, project=True) == source


BY_NAME = """\
import torch.nn as nn


def get_act(name):
    if name == "relu":
        return nn.ReLU(inplace=True)
    elif name in ("lrelu", "leaky"):
        act = nn.LeakyReLU(0.2, inplace=True)
    elif name != "gelu":
        raise ValueError(name)
    else:
        act = nn.GELU()
    return act
"""

USES = """\
import torch
import torch.nn as nn

{imported}


class Head(nn.Module):
    def __init__(self, dim, act={act!r}):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.act = get_act(act)
        self.drop = nn.Dropout(0.1, inplace=True)

    def forward(self, x):
        return self.drop(self.act(self.fc(x)))


def compute():
    torch.manual_seed(0)
    head = Head(4)
    head(torch.randn(3, 4)).sum().backward()
    return [p.grad.tolist() for p in head.parameters()]
"""


@pytest.mark.parametrize("act, proven", [("relu", True), ("leaky", True), ("gelu", False)])
@pytest.mark.parametrize("where", ["same-file", "other-file"])
def test_a_builder_branch_the_call_rules_out_is_left_out(tmp_path, where, act, proven):
    """``get_act("relu")`` of a builder testing its parameter (``==``, ``in``, ``!=`` with an
    ``else``): only the branches the name the call passes may reach count. "relu" and "leaky"
    build in-place modules saving their result (the dropout breaks them); "gelu" a GELU (saves
    its input: it runs)."""
    files = {"model.py": USES.replace("{act!r}", repr(act)).replace(
        "{imported}", BY_NAME.split("\n", 1)[1] if where == "same-file" else "from acts import get_act")}
    if where == "other-file":
        files["acts.py"] = BY_NAME
    else:
        files["other.py"] = "x = 1\n"
    _project(tmp_path, files)
    found = [f[2] for f in _findings(tmp_path, sorted(files)) if f[2].startswith("IPF1")]
    assert found == (["IPF102"] if proven else [])
    assert (_gradients(tmp_path) is None) is proven


def test_a_dropout_in_a_branch_no_call_of_its_builder_takes_is_no_proof():
    """``self.__dropout("3d")`` never builds the 2-D dropout of ``if kind == "2d":``: its
    construction writes nowhere (the 3-D one, built and called, is proven)."""
    source = UNET_BLOCK.replace("{act}", "get_act(activation)").replace(
        "self.drop = self.__dropout()", 'self.drop = self.__dropout("3d")').replace(
        "    def __dropout(self):\n        return nn.Dropout2d(self.p, inplace=True) if {test} else nn.Dropout3d(self.p, inplace=True)",
        "    def __dropout(self, kind):\n        if kind == \"2d\":\n            return nn.Dropout2d(self.p, inplace=True)\n"
        "        return nn.Dropout3d(self.p, inplace=True)")
    assert raises_inplace(source)
    assert _proven(source) == [("IPF102", _line_of(source, "return nn.Dropout3d"))]
