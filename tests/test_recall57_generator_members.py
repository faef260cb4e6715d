"""Layers listed by a generator expression (issue 24, stop 57).

allennlp-models' QANet (dev set27/2702) keeps its convolutions as
``nn.ModuleList(nn.Sequential(..., nn.ReLU()) for _ in range(num_convs))``: the list is built from a
generator expression, not a list comprehension. ``nn.ModuleList`` takes any iterable and stores
every module the generator yields, so each member is the comprehension's element, exactly as
``nn.ModuleList([... for _ in range(n)])`` would hold. The analysis read members only from a list
comprehension (or a display), so the loop ``for norm, conv in zip(self.norms, self.convs)`` (or
``self.convs[i]``) ran code it could not see, and the in-place ``transpose_`` on the ReLU's output
stayed unproven.

Only ``nn.ModuleList`` is read so: ``nn.Sequential(<generator>)`` refuses a generator (it is no
module). Every program is run with torch: the proven ones die in backward, the controls run.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import raises_proven, runs_unproven  # noqa: E402

_PROGRAM = """import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.norms = nn.ModuleList({norms})
        self.convs = nn.ModuleList({convs})

    def forward(self, x):
{body}
        return x


def main():
    torch.manual_seed(0)
    block = Block(2)
    x = torch.randn(2, 4, 5, requires_grad=True)
    block(x).sum().backward()
    return x.grad
"""

_RELU_CONVS = "nn.Sequential(nn.Conv1d(4, 4, 1), nn.ReLU()) for _ in range(n)"
_PLAIN_CONVS = "nn.Sequential(nn.ReLU(), nn.Conv1d(4, 4, 1)) for _ in range(n)"
_NORMS = "nn.LayerNorm(5) for _ in range(n)"

_LOOP = """        for conv in self.convs:
            y = conv(x)
            y += 1  # MARK
            x = y * 2"""

_ZIPPED = """        for norm, conv in zip(self.norms, self.convs):
            x = conv(norm(x).transpose(1, 2).transpose(1, 2)).transpose_(1, 2)  # MARK
            x = x.transpose(1, 2) * 2"""

_INDEXED = """        y = self.convs[0](x)
        y += 1  # MARK
        x = y * 2"""


def _program(body: str, convs: str = _RELU_CONVS, norms: str = _NORMS) -> str:
    return _PROGRAM.format(body=body, convs=convs, norms=norms)


@pytest.mark.parametrize("body", [_LOOP, _ZIPPED, _INDEXED], ids=["loop", "zip", "index"])
def test_a_module_list_of_a_generator_holds_its_element(body):
    raises_proven(_program(body))


@pytest.mark.parametrize("body", [_LOOP, _ZIPPED, _INDEXED], ids=["loop", "zip", "index"])
def test_the_list_comprehension_reads_the_same(body):
    # the form the analysis read before: the generator must read as this one does
    raises_proven(_program(body, convs=f"[{_RELU_CONVS}]", norms=f"[{_NORMS}]"))


@pytest.mark.parametrize("body", [_LOOP, _INDEXED], ids=["loop", "index"])
def test_members_ending_in_a_layer_that_saves_no_output_stay_unproven(body):
    # the convolution saves its input, not its output: writing into the output is harmless
    runs_unproven(_program(body, convs=_PLAIN_CONVS))


def test_members_of_different_classes_stay_unproven():
    # (a generator's element that is not one construction: what a member runs is not one class)
    convs = "nn.Conv1d(4, 4, 1) if i % 2 else nn.Sequential(nn.Conv1d(4, 4, 1), nn.ReLU()) for i in range(1, n)"
    runs_unproven(_program(_LOOP, convs=convs))
