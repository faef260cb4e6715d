"""Stop 50: two of the false proven groups prec50b found on never-measured code (torchrec 1.9.2
``hash_mc_modules.py:1101``), each a program that runs backward without the in-place error and
must not be proven, beside a look-alike that raises and stays proven:
- a name bound to a frozen parameter (``table = self.ids`` with ``self.ids = nn.Parameter(t,
  requires_grad=False)``) is a leaf PyTorch lets one write into, as ``self.ids`` itself is;
- a ``torch.distributed`` collective (``dist.gather(t, ...)``) records no graph: it saves nothing
  (it was read as ``torch.gather``).
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import proven, raises_inplace, run_program  # noqa: E402

FROZEN_ALIAS = '''\
import torch
from torch import nn


class Ids(nn.Module):
    def __init__(self):
        super().__init__()
        self.ids = nn.Parameter(torch.zeros(8, 1), requires_grad=False)
        self.scale = nn.Parameter(torch.ones(1))

    def sync(self, values):
        table = self.ids
        table.copy_(values)  # MARK
        return table * self.scale


def main():
    m = Ids()
    m.sync(torch.ones(8, 1)).sum().backward()
    return m.scale.grad
'''
TRAINED_ALIAS = FROZEN_ALIAS.replace("nn.Parameter(torch.zeros(8, 1), requires_grad=False)",
                                     "nn.Parameter(torch.zeros(8, 1))")

COLLECTIVE = '''\
import os
import tempfile

import torch
import torch.distributed as dist


def share(x):
    gathered = [torch.zeros_like(x)]
    dist.gather(x, gather_list=gathered, dst=0)
    x.add_(gathered[0])  # MARK
    return x


def main():
    store = dist.FileStore(os.path.join(tempfile.mkdtemp(), "store"), 1)
    dist.init_process_group("gloo", store=store, rank=0, world_size=1)
    try:
        w = torch.randn(4, requires_grad=True)
        share(w * 2).sum().backward()
        return w.grad
    finally:
        dist.destroy_process_group()
'''
# the same shape through torch.exp, which saves its result: raises
SAVED = COLLECTIVE.replace("    dist.gather(x, gather_list=gathered, dst=0)\\n",
                           "    dist.gather(x, gather_list=gathered, dst=0)\\n    y = torch.exp(x)\\n").replace(
    "    return x\\n", "    return x + y\\n").replace("share(w * 2)", "share(torch.exp(w))")


def _marked(source: str) -> set:
    return {i for i, line in enumerate(source.splitlines(), 1) if line.endswith("# MARK")}


def _proven_lines(source: str) -> set:
    return {line for _, line in proven(source)}


@pytest.mark.parametrize("source", [FROZEN_ALIAS, COLLECTIVE], ids=["frozen-parameter-alias", "collective"])
def test_the_false_groups_run_backward_and_are_not_proven(source):
    assert run_program(source) is not None
    assert not _marked(source) & _proven_lines(source)


@pytest.mark.parametrize("source", [TRAINED_ALIAS, SAVED], ids=["trained-parameter-alias", "saved-by-exp"])
def test_the_look_alikes_raise_and_stay_proven(source):
    assert raises_inplace(source, message=("modified by an inplace operation", "leaf Variable that requires grad"))
    assert _marked(source) <= _proven_lines(source)
