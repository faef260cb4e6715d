"""A helper of the file that reads only a tensor's metadata keeps nothing of it; one that
stores a view of it, or a module of the file it calls that does, keeps it (sound35c).

Each program works under ``torch.no_grad()``: the default ``fix`` must leave every tensor
``main()`` returns bit-identical, and where the helper keeps nothing the safe fix is made.
"""

from __future__ import annotations

import pathlib
import tempfile

import pytest
import torch

from codemod.config import Settings
from codemod.engine.pipeline import process_source
from codemod.engine.project import build_index

PROGRAM = """\
import torch
import torch.nn as nn

SEEN = []


def measure(t):
    STORE
    return t.sum()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        h = torch.sigmoid(self.fc(x))
        total = measure(h)
        h *= 5
        return h, total


def main():
    torch.manual_seed(0)
    net = Net()
    with torch.no_grad():
        out = net(torch.randn(2, 3))
    return [*out, *[s for s in SEEN if isinstance(s, torch.Tensor)]]
"""


def _fixed(source: str) -> str:
    data = source.encode()
    with tempfile.TemporaryDirectory() as tmp:
        case = pathlib.Path(tmp, "case.py")
        case.write_bytes(data)
        index = build_index([str(case)])
        result = process_source(data, "case.py", Settings(), fix=True, project=index, module_name="case")
    assert result.error is None, result.error
    return result.fixed if result.changed else source


def _run(source: str) -> list:
    space: dict = {"__name__": "case"}
    exec(compile(source, "case.py", "exec"), space)
    return list(space["main"]())


@pytest.mark.parametrize("store", ["SEEN.append(list(t.size()))", "SEEN.append(t.shape[0])",
                                   "SEEN.append(int(t.numel()))"])
def test_a_helper_reading_only_metadata_keeps_nothing(store):
    """``list(t.size())`` is numbers: the safe rewrite ``h = h * 5`` is made, same results."""
    source = PROGRAM.replace("STORE", store)
    fixed = _fixed(source)
    assert "h = h * 5" in fixed
    for got, want in zip(_run(fixed), _run(source)):
        assert torch.equal(got, want)


@pytest.mark.parametrize("store", ["SEEN.append(t.detach())", "SEEN.append(t[0])", "SEEN.append(t.view(-1))",
                                   "SEEN.append(torch.flatten(t))", "u = torch.narrow(t, 0, 0, 1); SEEN.append(u)"])
def test_a_helper_storing_a_view_keeps_it(store):
    """``SEEN.append(t.detach())`` shares ``h``'s storage: it sees ``h *= 5``; no safe rewrite."""
    source = PROGRAM.replace("STORE", store)
    fixed = _fixed(source)
    assert fixed == source
    assert not torch.equal(_run(source)[2], _run(source.replace("        h *= 5\n", "        h = h * 5\n"))[2])
