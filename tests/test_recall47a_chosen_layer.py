"""Family A: the layer before an in-place one is chosen at run time (issue 24, stop 47).

A chain of layers (``nn.Sequential(conv, norm, act, drop)``) often holds, before an in-place
dropout, a layer whose value is one of several: a name bound to a conditional expression
(``act = get_act(a) if a is not None else get_act("relu")``), or bound on the branches of an
``if``/``else``. What feeds the in-place layer is then whichever of those was built: where
every one of them saves its output for backward (a ReLU, a Tanh, an in-place LeakyReLU, each
built by a builder whose every return is such a module), the in-place write breaks backward
whichever was chosen: proven. Where one of them saves its input only (an ELU, a GELU), or one
cannot be seen (a parameter, a call of an unknown function), nothing is proven.

Every program is new (none is a corpus case); each original dies in backward where the fact is
proven, each look-alike runs and stays unproven.
"""

from __future__ import annotations

import textwrap

import pytest
import torch

from codemod.config import Settings
from tests.programs import fixed_source, process_in_project, raises_inplace, run_program


def _proven(source: str) -> list:
    return [(f.code, f.span.line) for f in process_in_project(source, Settings()).findings
            if f.code.startswith("IPF1")]


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _same_gradients(fixed: str, want: str) -> None:
    got, expected = run_program(fixed), run_program(want)
    assert len(got) == len(expected) and all(torch.equal(g, w) for g, w in zip(got, expected))


BLOCK = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def make_act(kind, inplace=True):
        if kind.lower() == "relu":
            layer = nn.ReLU(inplace=inplace)
        elif kind.lower() == "leaky":
            layer = nn.LeakyReLU(0.2, inplace=inplace)
        elif kind.lower() == "tanh":
            layer = nn.Tanh()
        else:
            raise ValueError(kind)
        return layer


    class Stage(nn.Module):
        def __init__(self, width, kind=None, p=0.3):
            super().__init__()
            self.p = p
            self.body = self._block(width, kind)

        def _drop(self):
            return nn.Dropout(self.p, inplace=True)

        def _block(self, width, kind):
    {choose}
            return nn.Sequential(nn.Linear(width, width), act, self._drop())

        def forward(self, x):
            return self.body(x)


    def main():
        torch.manual_seed(0)
        stage = Stage(6, {kind})
        stage(torch.randn(5, 6)).pow(2).sum().backward()
        return [p.grad for p in stage.parameters()]
""")

CONDITIONAL = '        act = make_act(kind) if kind is not None else make_act("relu")'
BRANCHES = textwrap.indent(textwrap.dedent("""\
    if kind == "sig":
        act = nn.Sigmoid()
    else:
        act = nn.ReLU()"""), " " * 8)


def _program(choose: str, kind: str = '"tanh"') -> str:
    return BLOCK.replace("{choose}", choose).replace("{kind}", kind)


@pytest.mark.parametrize("choose, kind", [
    (CONDITIONAL, '"tanh"'),
    (CONDITIONAL, "None"),
    (BRANCHES, '"sig"'),
    (BRANCHES, '"relu"'),
], ids=["conditional-tanh", "conditional-relu", "branches-sigmoid", "branches-relu"])
def test_an_inplace_dropout_after_a_chosen_activation_that_saves_its_output(choose, kind):
    """Every layer the chain may hold before the dropout saves its output: the dropout's
    in-place write breaks backward whichever is chosen; proven, and fixed where it is built."""
    source = _program(choose, kind)
    assert raises_inplace(source)
    line = _line_of(source, "return nn.Dropout(self.p, inplace=True)")
    assert _proven(source) == [("IPF102", line)]
    fixed = fixed_source(source, project=True)
    assert "nn.Dropout(self.p, inplace=False)" in fixed
    _same_gradients(fixed, source.replace("nn.Dropout(self.p, inplace=True)", "nn.Dropout(self.p)"))


@pytest.mark.parametrize("choose, kind", [
    ('        act = nn.ELU() if kind == "elu" else nn.ReLU()', '"elu"'),
    ('        act = nn.GELU() if kind is None else make_act(kind)', "None"),
    (BRANCHES.replace("nn.Sigmoid()", "nn.SiLU()"), '"sig"'),
], ids=["conditional-elu", "conditional-gelu", "branches-silu"])
def test_one_choice_that_saves_its_input_proves_nothing(choose, kind):
    """One of the layers the chain may hold saves its input only (ELU, GELU, SiLU): the write
    may break nothing (it does not for the choice the program makes); not proven."""
    source = _program(choose, kind)
    run_program(source)  # it runs
    assert _proven(source) == []


def test_a_choice_the_analysis_cannot_see_proves_nothing():
    """One branch hands over what the caller passed: unknown is not yes."""
    source = _program('        act = kind if not isinstance(kind, str) else make_act(kind)', "nn.GELU()")
    run_program(source)
    assert _proven(source) == []


def test_both_choices_save_nothing_of_their_output():
    """Every choice saves its input only (GELU or ELU): the in-place dropout is harmless, the
    program runs, nothing is proven."""
    source = _program('        act = nn.GELU() if kind == "g" else nn.ELU()', '"e"')
    run_program(source)
    assert _proven(source) == []


# ---------------------------------------------------------------- a table of module instances

TABLE = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def head(width, kind):
        acts = {"relu": nn.ReLU(), "tanh": nn.Tanh(), "other": {other}}
        if kind not in acts:
            raise KeyError(kind)
        {change}
        return nn.Sequential(nn.Linear(width, width), acts[kind], nn.Dropout(0.25, inplace=True))


    def main():
        torch.manual_seed(0)
        net = head(6, {kind})
        net(torch.randn(4, 6)).pow(2).sum().backward()
        return [p.grad for p in net.parameters()]
""")


@pytest.mark.parametrize("other, kind", [
    ("nn.Sigmoid()", '"tanh"'),  # every entry saves its output
    ("nn.GELU()", '"relu"'),  # the key picks the ReLU (the file's only call passes "relu")
], ids=["every-entry", "picked-entry"])
def test_an_inplace_dropout_after_a_layer_picked_from_a_dict_of_modules(other, kind):
    """``acts[kind]`` of a dict display of module instances bound once and only read: the layer
    is one of the entries the key may pick; each saves its output, so the dropout's write is
    proven, and fixed."""
    source = TABLE.replace("{other}", other).replace("{kind}", kind).replace("    {change}\n", "")
    assert raises_inplace(source)
    assert _proven(source) == [("IPF102", _line_of(source, "nn.Dropout(0.25, inplace=True)"))]
    fixed = fixed_source(source, project=True)
    assert "nn.Dropout(0.25, inplace=False)" in fixed
    _same_gradients(fixed, source.replace("nn.Dropout(0.25, inplace=True)", "nn.Dropout(0.25)"))


@pytest.mark.parametrize("change, kind", [
    ("", '"other"'),  # the GELU entry is picked
    ('acts["relu"] = nn.ELU()', '"relu"'),  # an entry replaced after the display
    ("acts.update(relu=nn.GELU())", '"relu"'),  # changed by a method
    ("register(acts)", '"relu"'),  # handed to a call that may change it
], ids=["gelu-entry", "entry-replaced", "updated", "handed-on"])
def test_a_table_entry_that_saves_its_input_or_a_changed_table_proves_nothing(change, kind):
    source = TABLE.replace("{other}", "nn.GELU()").replace("{kind}", kind).replace("{change}", change).replace(
        "def main():", "def register(table):\n    table[\"relu\"] = nn.GELU()\n\n\ndef main():")
    run_program(source)
    assert _proven(source) == []
