"""Family A: an activation whose class is chosen by a name (issue 24, stop 41).

Real builders pick the activation from a string: ``getattr(nn, act)()``, a table of classes
(``ACTS[name]()``), a ``get_act(name)`` helper. What such a construction builds is every module
the name may pick (``summaries.BuiltLayers``): the strings the name may hold (its default and what
the file's constructions pass), every class of the table where the key is not known. A write into
its output is proven only where every one of those modules saves its output; a mix (GELU saves its
input), a table changed after it is built, or a name from a caller the file cannot see leaves it
unproven. Each program is new (no corpus case); each original dies in backward where the fact is
proven, and each look-alike runs.
"""

from __future__ import annotations

import textwrap

import pytest
import torch

from codemod.config import Settings
from tests.programs import fixed_source, process_in_project, raises_inplace, run_program

BLOCK = textwrap.dedent("""\
    import torch
    import torch.nn as nn

    ACTS = {"relu": nn.ReLU, "sigmoid": nn.Sigmoid, "tanh": nn.Tanh, "gelu": nn.GELU}
    {table_change}

    class Block(nn.Module):
        def __init__(self, c, act={default}):
            super().__init__()
            self.fc = nn.Linear(c, c)
            self.act = {build}

        def forward(self, x):
            out = self.act(self.fc(x))
            out += x
            return out


    def main():
        torch.manual_seed(0)
        first = Block(4{first})
        second = Block(4{second})
        x = torch.randn(3, 4)
        second(first(x)).sum().backward()
        return [p.grad for p in [*first.parameters(), *second.parameters()]]
""")
GETATTR = "getattr(nn, act)()"
TABLE = "ACTS[act]()"


def _block(build: str, default: str, first: str = "", second: str = "", table_change: str = "") -> str:
    return (BLOCK.replace("{build}", build).replace("{default}", default).replace("{first}", first)
            .replace("{second}", second).replace("{table_change}", table_change))


def _proven(source: str) -> list:
    return [f for f in process_in_project(source, Settings()).findings if f.code.startswith("IPF1")]


@pytest.mark.parametrize("build, default, first, second", [
    (GETATTR, '"ReLU"', "", ', act="Tanh"'),  # the default and what a construction passes: both save their result
    (GETATTR, '"GELU"', ', act="Sigmoid"', ', "ReLU"'),  # the default is never used
    (TABLE, '"relu"', "", ', act="sigmoid"'),
], ids=["getattr-default-and-passed", "getattr-passed-only", "table-keys"])
def test_an_activation_chosen_by_name_is_every_module_the_name_picks(build, default, first, second):
    source = _block(build, default, first, second)
    assert raises_inplace(source)  # the activation saved its result; `out += x` wrote into it
    found = _proven(source)
    write = source.splitlines().index("        out += x") + 1
    assert [(f.code, f.span.line) for f in found] == [("IPF101", write)], found
    fixed = fixed_source(source, project=True)  # the safe tier: each module's output is a tensor
    assert "out = out + x" in fixed
    got = run_program(fixed)
    want = run_program(source.replace("out += x", "out = out + x"))
    assert len(got) == len(want) and all(torch.equal(g, w) for g, w in zip(got, want))


@pytest.mark.parametrize("build, default, first, second, table_change", [
    (GETATTR, '"ReLU"', ', act="GELU"', ', "GELU"', ""),  # every construction passes GELU: it saves its input
    (GETATTR, '"GELU"', "", ', act="ReLU"', ""),  # a mix: the ReLU instance breaks, but no fact is per instance yet
    (TABLE, '"gelu"', "", "", ""),  # the table's GELU
    (TABLE, '"relu"', "", "", 'ACTS["relu"] = nn.GELU'),  # the table is changed after it is built
], ids=["getattr-gelu", "getattr-mix", "table-gelu", "table-changed"])
def test_an_activation_name_that_may_pick_one_saving_its_input_proves_nothing(build, default, first, second,
                                                                              table_change):
    source = _block(build, default, first, second, table_change)
    if "ReLU" not in first + second:
        run_program(source)  # it runs
    assert _proven(source) == []


@pytest.mark.parametrize("build", [GETATTR, TABLE])
def test_a_name_the_file_cannot_know_proves_nothing_but_a_table_saving_alike(build):
    """A construction passes a name read from a configuration: ``getattr`` may build anything; a
    table builds one of its classes, proven only where every one of them saves its result."""
    source = _block(build, '"ReLU"' if build == GETATTR else '"relu"', second=', act=config["act"]')
    source = source.replace("def main():", "def main(config):")
    assert _proven(source) == []  # the table holds GELU too
    saving = source.replace(', "gelu": nn.GELU}', "}")
    assert [f.code for f in _proven(saving)] == ([] if build == GETATTR else ["IPF101"])


def test_an_activation_from_a_get_act_helper_feeds_an_in_place_dropout():
    """``get_act(name)`` returns an in-place ReLU or a Sigmoid, both saving their result: the
    in-place dropout after it in an ``nn.Sequential`` writes into what they saved."""
    source = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        def get_act(name):
            if name == "relu":
                return nn.ReLU(inplace=True)
            if name == "sigmoid":
                return nn.Sigmoid()
            raise ValueError(name)


        def main():
            torch.manual_seed(0)
            head = nn.Sequential(nn.Linear(4, 4), get_act("sigmoid"), nn.Dropout(0.5, inplace=True), nn.Linear(4, 2))
            head(torch.randn(3, 4)).sum().backward()
            return [p.grad for p in head.parameters()]
    """)
    assert raises_inplace(source)
    assert [f.code for f in _proven(source)] == ["IPF102"]
    fixed = fixed_source(source, project=True)
    assert "nn.Dropout(0.5, inplace=False)" in fixed
    got, want = run_program(fixed), run_program(source.replace("inplace=True)", "inplace=False)"))
    assert all(torch.equal(g, w) for g, w in zip(got, want))


SPREAD = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class MLP(nn.Sequential):
        def __init__(self, dims, activation_layer=nn.ReLU, inplace={default}, p=0.5):
            params = {} if inplace is None else {"inplace": inplace}
            {change}
            layers = []
            for a, b in zip(dims[:-2], dims[1:-1]):
                layers.append(nn.Linear(a, b))
                layers.append(activation_layer(**params))
                layers.append(nn.Dropout(p, **params))
            layers.append(nn.Linear(dims[-2], dims[-1]))
            super().__init__(*layers)


    def main():
        torch.manual_seed(0)
        mlp = MLP([4, 6, 2]{passed})
        mlp(torch.randn(3, 4)).sum().backward()
        return [p.grad for p in mlp.parameters()]
""")


def _spread(default: str = "True", passed: str = "", change: str = "") -> str:
    return SPREAD.replace("{default}", default).replace("{passed}", passed).replace("{change}", change)


@pytest.mark.parametrize("other", ["", "    off = MLP([4, 6, 2], inplace=False)\n"], ids=["default", "and-one-off"])
def test_an_inplace_flag_spread_from_a_dict_is_followed(other):
    """``params = {} if inplace is None else {"inplace": inplace}``, spread into the activation and
    the dropout: with the default ``True`` both run in place, and the dropout writes into the result
    the ReLU saved (in place or not). Reported without a fix (the flag is a variable), as
    ``inplace=inplace`` is, also where another construction turns it off."""
    source = _spread().replace("    mlp = MLP", other + "    mlp = MLP")
    assert raises_inplace(source)
    found = _proven(source)
    dropout = next(i for i, line in enumerate(source.splitlines(), 1) if "nn.Dropout(p, **params)" in line)
    assert [(f.code, f.span.line) for f in found] == [("IPF102", dropout)], found
    assert fixed_source(source, project=True) == source  # a variable: no rewrite


@pytest.mark.parametrize("default, passed, change", [
    ("None", "", ""),  # no flag in the dict: neither runs in place
    ("True", ", inplace=False", ""),  # every construction turns it off
    ("True", "", 'params["inplace"] = False'),  # the dict is changed after it is built
    ("True", ", **cfg", ""),  # a construction spreads a configuration
], ids=["none", "passed-false", "dict-changed", "construction-spreads"])
def test_a_spread_flag_that_may_be_off_is_no_proof(default, passed, change):
    source = _spread(default, passed, change).replace("    mlp = MLP", '    cfg = {"inplace": False}\n    mlp = MLP')
    run_program(source)  # it runs
    assert _proven(source) == []
