"""Issue 24 (default `fix`, fix54): two facts that kept `out += residual` (YOLOv4's CSPBlock, set15/815)
from the safe tier, each sound on its own:

- a module attribute built from a read-only dict table of the file (`self.act = ACTS[name](inplace=True)`,
  `self.act = ACTS[name]` over `{"mish": Mish()}`) keeps none of its arguments where every entry the key
  may pick is a torch module class, or a module instance that is torch's or of a file class whose
  `forward` keeps none of its parameters; an `__init__` branch no instance takes (`if act == "mish":`
  where every instance is built with "relu") adds nothing (`Decided.final`);
- a binding or a load in a branch no instance of the file takes (`if self.attention is not None:` where
  `__init__` sets `self.attention = None`) neither makes the target's kind unknown nor stores it.

Controls stay unsafe: a table entry that keeps its input, a table written after it is built, an
attention branch some instance takes.
"""

from __future__ import annotations

import pytest
import torch

from tests.programs import fixed_source, run_program, safety_marks

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
OFFSET = HEADER.count("\n")

TABLES = """\
class Mish(nn.Module):
    def forward(self, x):
        return x * torch.tanh(F.softplus(x))


class Keeper(nn.Module):
    def forward(self, x):
        y = torch.sigmoid(x)
        self.last = y
        return y


NORMS = {"bn": nn.BatchNorm1d}
ACTS = {"relu": nn.ReLU, "leaky": nn.LeakyReLU, "linear": nn.Identity(), "mish": Mish()}


class Conv(nn.Module):
    def __init__(self, d, act="relu"):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.norm = NORMS["bn"](d)
        if act == "relu":
            self.act = ACTS[act](inplace=True)
        if act == "mish":
            self.act = ACTS[act]

    def forward(self, x):
        x = self.fc(x)
        x = self.norm(x)
        return self.act(x)
"""

BLOCK = """

class Block(nn.Module):
    def __init__(self, d, attention=None):
        super().__init__()
        self.block = nn.Sequential(Conv(d), Conv(d))
        self.attention = attention

    def forward(self, x):
        residual = x
        out = self.block(x)
        if self.attention is not None:
            out = self.attention(out)
        out += residual
        return out


def main():
    torch.manual_seed(0)
    net = Block(6)
    x = torch.randn(4, 6, requires_grad=True)
    out = net(x)
    out.pow(2).sum().backward()
    return [out.detach(), x.grad, net.block[0].fc.weight.grad, net.block[1].fc.weight.grad]
"""
WRITE = "        out += residual\n"
WRITE_LINE = (TABLES + BLOCK).splitlines().index(WRITE.rstrip("\n")) + 1
NO_BRANCH = BLOCK.replace("        if self.attention is not None:\n            out = self.attention(out)\n", "")
# The write's hazard in plain view (`out * out` saves `out`), whatever the block's last layer is.
SAVED = NO_BRANCH.replace("        out += residual\n        return out\n",
                          "        sq = out * out\n        out += residual\n        return out + sq\n")
PLAIN_CONV = TABLES.replace('self.norm = NORMS["bn"](d)', "self.norm = nn.BatchNorm1d(d)").replace(
    "self.act = ACTS[act](inplace=True)", "self.act = nn.ReLU(inplace=True)").replace(
    "self.act = ACTS[act]\n", "self.act = Mish()\n")


# How the last layer's result leaves `Conv.forward`: through a name (YOLOv4's form) or returned at once.
RETURNED = "        return self.act(x)\n"
FORMS = {"named": "        x = self.act(x)\n        return x\n", "returned": RETURNED}
forms = pytest.mark.parametrize("form", sorted(FORMS))


def _form(source: str, form: str) -> str:
    assert RETURNED in source
    return source.replace(RETURNED, FORMS[form])


def _marks(source: str):
    return safety_marks(HEADER, source)


def _fixed(source: str) -> str:
    return fixed_source(HEADER + source, project=True)


def _fixed_matches_reference(source: str) -> None:
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run_program(HEADER + source)
    fixed = _fixed(source)
    assert "out = out + residual" in fixed
    reference = HEADER + source.replace(WRITE, "        out = out + residual\n")
    got, want = run_program(fixed), run_program(reference)
    assert len(got) == len(want) and all(torch.equal(g, w) for g, w in zip(got, want))


@forms
def test_a_module_from_a_table_keeps_nothing_and_the_fix_matches_the_reference(form):
    source = _form(TABLES + NO_BRANCH, form)
    assert _marks(source) == [(WRITE_LINE - 2 + FORMS[form].count("\n") - 1, "safe", None)]
    _fixed_matches_reference(source)


@forms
def test_a_branch_no_instance_takes_hides_nothing_and_the_fix_matches_the_reference(form):
    source = _form(PLAIN_CONV + BLOCK, form)
    assert _marks(source) == [(WRITE_LINE + FORMS[form].count("\n") - 1, "safe", None)]
    _fixed_matches_reference(source)


@forms
def test_both_together_the_yolov4_form(form):
    _fixed_matches_reference(_form(TABLES + BLOCK, form))


def _unsafe(source: str) -> None:
    marks = _marks(source)
    assert len(marks) == 1 and marks[0][1] == "unsafe", marks
    assert "out = out + residual" not in _fixed(source)


@forms
def test_a_table_entry_that_keeps_its_input_stays_unsafe(form):
    """`"relu": Keeper()` picked: the block's output is `Keeper.last` too; `out += residual` writes
    into it, the rewrite would not (the kept tensor differs)."""
    source = TABLES.replace('"relu": nn.ReLU,', '"relu": nn.ReLU, "keep": Keeper(),').replace(
        'if act == "mish":', 'if act in ("mish", "keep"):') + SAVED.replace("Conv(d), Conv(d)", 'Conv(d), Conv(d, "keep")')
    source = _form(source, form)
    _unsafe(source)
    kept = source.replace("return [out.detach(),", "return [net.block[1].act.last.detach(), out.detach(),")
    kept = kept.replace("out.pow(2).sum().backward()", "").replace("return out + sq", "return out")
    inplace = run_program(HEADER + kept)
    rewritten = run_program(HEADER + kept.replace(WRITE, "        out = out + residual\n"))
    assert torch.equal(inplace[0], inplace[1]) and not torch.equal(rewritten[0], rewritten[1])


@forms
def test_a_table_written_after_it_is_built_stays_unsafe(form):
    source = TABLES.replace('class Conv(', 'ACTS["mish"] = Keeper()\n\n\nclass Conv(').replace(
        "Conv(d), Conv(d)", 'Conv(d), Conv(d, "mish")')
    _unsafe(_form(source + SAVED.replace("Conv(d), Conv(d)", 'Conv(d), Conv(d, "mish")'), form))


@forms
def test_a_table_of_a_file_class_that_keeps_its_input_stays_unsafe(form):
    source = TABLES.replace('"mish": Mish()', '"mish": Keeper()')
    _unsafe(_form(source + SAVED.replace("Conv(d), Conv(d)", 'Conv(d), Conv(d, "mish")'), form))


@forms
def test_an_attention_branch_some_instance_takes_stays_unsafe(form):
    """`Block(6, Keeper())` somewhere: the branch may run, and `Keeper` keeps `out`."""
    source = _form(PLAIN_CONV + BLOCK + "\n\nOTHER = Block(6, Keeper())\n", form)
    _unsafe(source)


@forms
def test_a_table_of_a_file_class_that_keeps_what_it_returns_stays_unsafe(form):
    """`forward` keeps no parameter but hands back a tensor it keeps (`return self.cache`)."""
    cacher = "class Cacher(nn.Module):\n    def forward(self, x):\n        self.cache = torch.sigmoid(x) * 2\n" \
             "        return self.cache\n\n\n"
    source = cacher + TABLES.replace('"mish": Mish()', '"mish": Cacher()')
    _unsafe(_form(source + SAVED.replace("Conv(d), Conv(d)", 'Conv(d), Conv(d, "mish")'), form))
