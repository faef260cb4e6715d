"""A helper of the file that reads only a tensor's metadata keeps nothing of it; one that
stores a view of it, or a module of the file it calls that does, keeps it (sound35c).

Each program works (its forward with grad on, no backward): the default ``fix`` must leave every tensor
``main()`` returns bit-identical, and where the helper keeps nothing the safe fix is made.
"""

from __future__ import annotations


import pytest
import torch

from tests.programs import fixed_source, run_program

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
    out = net(torch.randn(2, 3))  # (grad on: a forward run only under no_grad is no candidate, stop 57)
    return [*[t.detach() for t in out], *[s for s in SEEN if isinstance(s, torch.Tensor)]]
"""


def _fixed(source: str) -> str:
    return fixed_source(source, project=True, other=False)


def _run(source: str) -> list:
    return list(run_program(source))


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
