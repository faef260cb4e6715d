"""Issue 24 (recall, rec24j): facts about what a module's input is, taken from its callers.

Group 1: an in-place activation that is the first layer of an ``nn.Sequential`` bound to a
name (``self.head = nn.Sequential(nn.ReLU(inplace=True), ...)``) writes into whatever
``self.head(h)`` is given. Where a call of the file hands it a tensor autograd saved (the output
of ``tanh``, or of a block whose forward ends in ``sigmoid``), the write is a proven hazard, as
it already was for a lone ``self.act = nn.ReLU(inplace=True)``.

Each program is a new small one written from the pattern; torch runs it to show it really
raises, and the fixed program's gradients are compared with the same program written out of
place. The negative controls (the Sequential handed a fresh sum or a convolution's output, whose
output nothing saves; an in-place layer that is not the first) run and stay unproven.
"""

from __future__ import annotations

import textwrap

import torch

from codemod.config import Settings
from codemod.engine.pipeline import process_source

HEADER = "import torch\nimport torch.nn as nn\n\n\n"
OFFSET = HEADER.count("\n")
INPLACE_ERROR = "modified by an inplace operation"


def marks(body: str, select=("IPF1",)):
    data = (HEADER + textwrap.dedent(body)).encode()
    result = process_source(data, "case.py", Settings(select=select))
    assert result.error is None, result.error
    return [(f.code, f.span.line - OFFSET, f.status.value if f.status else None) for f in result.findings]


def run(source: str, name: str = "main"):
    space: dict = {"__name__": "case"}
    exec(compile(source, "case.py", "exec"), space)
    torch.manual_seed(0)
    return space[name]()


def raises_inplace(source: str) -> bool:
    try:
        run(source)
    except RuntimeError as error:
        return INPLACE_ERROR in str(error)
    return False


def fixed(body: str) -> str:
    result = process_source((HEADER + textwrap.dedent(body)).encode(), "case.py", Settings(), fix=True)
    assert result.error is None and result.changed, result.findings
    return result.fixed


def same(got: dict, want: dict) -> bool:
    return got.keys() == want.keys() and all(torch.allclose(got[k], want[k]) for k in want)


# ------------------------------------------------- group 1: the first layer of a named Sequential
SEQUENTIAL_AFTER_BLOCK = """\
class Gate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.proj = nn.Linear(c, c)
        self.squash = nn.Sigmoid()

    def forward(self, x):
        return self.squash(self.proj(x))


class Tower(nn.Module):
    def __init__(self, c=6):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(c, c), Gate(c))
        self.head = nn.Sequential(
            nn.ELU(inplace=True),
            nn.Linear(c, 3),
        )

    def forward(self, x):
        features = self.trunk(x)
        return self.head(features)


def main():
    tower = Tower()
    tower(torch.randn(4, 6)).square().mean().backward()
    return {n: p.grad for n, p in tower.named_parameters()}


if __name__ == "__main__":
    main()
"""


def test_the_first_in_place_layer_of_a_sequential_handed_a_saved_output_is_proven_and_fixed():
    found = marks(SEQUENTIAL_AFTER_BLOCK)
    assert [(code, line) for code, line, _ in found] == [("IPF102", 16)], found
    source = HEADER + SEQUENTIAL_AFTER_BLOCK
    assert raises_inplace(source)
    got = run(fixed(SEQUENTIAL_AFTER_BLOCK))
    want = run(source.replace("nn.ELU(inplace=True)", "nn.ELU()"))
    assert same(got, want)


SEQUENTIAL_AFTER_TANH = """\
class Encoder(nn.Module):
    def __init__(self, c=5):
        super().__init__()
        self.inp = nn.Linear(c, c)
        self.out = nn.Sequential(nn.LeakyReLU(0.1, inplace=True), nn.Linear(c, 2))

    def forward(self, x):
        hidden = torch.tanh(self.inp(x))
        return self.out(hidden)


def main():
    enc = Encoder()
    enc(torch.randn(3, 5)).sum().backward()
    return {n: p.grad for n, p in enc.named_parameters()}
"""


def test_a_sequential_handed_a_tanh_output_is_proven():
    found = marks(SEQUENTIAL_AFTER_TANH)
    assert [(code, line) for code, line, _ in found] == [("IPF102", 5)], found
    assert raises_inplace(HEADER + SEQUENTIAL_AFTER_TANH)


# negative controls: the same Sequential handed what nothing saves
SEQUENTIAL_AFTER_CONV = """\
class Stage(nn.Module):
    def __init__(self, c=4):
        super().__init__()
        self.conv = nn.Conv1d(c, c, 3, padding=1)
        self.bias = nn.Parameter(torch.zeros(c, 1))
        self.post = nn.Sequential(nn.ReLU(inplace=True), nn.Conv1d(c, c, 1))

    def forward(self, x):
        y = self.conv(x) + self.bias
        return self.post(y)


def main():
    stage = Stage()
    stage(torch.randn(2, 4, 7)).sum().backward()
    return {n: p.grad for n, p in stage.named_parameters()}
"""


def test_a_sequential_handed_an_unsaved_sum_stays_unproven():
    run(HEADER + SEQUENTIAL_AFTER_CONV)  # runs: nothing saved the sum
    assert marks(SEQUENTIAL_AFTER_CONV) == []


SEQUENTIAL_NOT_FIRST = """\
class Head(nn.Module):
    def __init__(self, c=4):
        super().__init__()
        self.inp = nn.Linear(c, c)
        self.body = nn.Sequential(nn.Linear(c, c), nn.ReLU(inplace=True), nn.Linear(c, 1))

    def forward(self, x):
        return self.body(torch.sigmoid(self.inp(x)))


def main():
    head = Head()
    head(torch.randn(2, 4)).sum().backward()
    return {n: p.grad for n, p in head.named_parameters()}
"""


def test_an_in_place_layer_after_a_linear_is_silent_whatever_the_caller_hands():
    run(HEADER + SEQUENTIAL_NOT_FIRST)  # runs: the ReLU writes the Linear's fresh output
    assert marks(SEQUENTIAL_NOT_FIRST) == []
