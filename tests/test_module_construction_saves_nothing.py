"""Building a module saves nothing: `nn.Linear(n, width)` takes sizes, not inputs. The analysis
read a torch.nn class's construction as a call of the module (what its forward saves), so an
integer handed to the constructor and then added to in place was "saved for backward by
torch.nn.Linear" (IPF201 under `--select ALL`, stop 45's migration sweep: monai's MAISI UNet
`new_time_embed_dim += time_embed_dim` after `nn.Linear(input_dim, time_embed_dim)`, also
through a helper that builds the module). Calling the module still saves its input."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.config import Settings  # noqa: E402
from codemod.engine.pipeline import process_source  # noqa: E402
from tests.programs import raises_inplace  # noqa: E402

ALL = Settings(select=("ALL",))

DIRECT = '''\
import torch
from torch import nn


def build(channels):
    width = channels[0] * 4
    layer = nn.Linear(width, 3)
    total = width
    total += width
    return layer, total
'''

THROUGH_A_HELPER = '''\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, channels):
        super().__init__()
        width = channels[0] * 4
        self.a = self._embed(channels[0], width)
        total = width
        total += width
        self.out = nn.Linear(total, 2)

    def _embed(self, n, width):
        model = nn.Sequential(nn.Linear(n, width), nn.SiLU(), nn.Linear(width, width))
        return model

    def forward(self, x):
        return self.out(self.a(x))


def main():
    return Net([2]).out.in_features
'''

CALLED = '''\
import torch
from torch import nn


def main():
    x = torch.randn(2, 3, requires_grad=True) * 1.0
    y = torch.sigmoid(nn.Linear(3, 3)(x))
    y += 1
    y.sum().backward()
'''


def _messages(source: str):
    result = process_source(source.encode(), "case.py", ALL)
    assert result.error is None, result.error
    return [(f.code, f.message) for f in result.findings]


@pytest.mark.parametrize("source", [DIRECT, THROUGH_A_HELPER], ids=["direct", "through-a-helper"])
def test_sizes_handed_to_a_module_constructor_are_not_saved(source):
    found = _messages(source)
    assert not any("saved for backward" in message for _, message in found), found


def test_the_helper_program_runs():
    from tests.programs import run_program
    assert run_program(THROUGH_A_HELPER) == 16


def test_calling_the_module_still_saves():
    assert raises_inplace(CALLED)
    assert any(code.startswith("IPF1") for code, _ in _messages(CALLED))
