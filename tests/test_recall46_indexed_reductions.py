"""Scatter and index reductions save their result (issue 24, stop 46).

``scatter_reduce`` and ``index_reduce`` (every reduction, ``include_self`` or not) save their
input, their source and their result for backward; ``scatter``, ``scatter_add``, ``index_put``,
``index_fill``, ``masked_scatter`` save neither input nor result. The measured tables of
``torch_api.py`` held none of them, so a write into a pooled result was only "a call the analysis
cannot see into" (possible). The programs are written in the public shape of sparse pooling
(a max over the positions of each token id, then some ids zeroed), not copied from a report.
"""

from __future__ import annotations

import textwrap

import pytest
import torch

from codemod import torch_api
from codemod.config import Settings
from tests.programs import fixed_source, proven, raises_inplace, run_program

POOL = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Pool(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 1)

        def forward(self, h, ids):
            w = torch.relu(self.lin(h)).squeeze(-1)
            pooled = torch.zeros(ids.size(0), 10)
            pooled = pooled.scatter_reduce(-1, ids, w, reduce="amax")
            pooled[:, [0, 1]] *= 0.0
            return pooled


    def main():
        torch.manual_seed(0)
        m = Pool()
        h = torch.randn(2, 5, 4)
        ids = torch.randint(0, 10, (2, 5))
        m(h, ids).pow(2).sum().backward()
        return [m.lin.weight.grad, m.lin.bias.grad]
""")
POOL_WRITE = "        pooled[:, [0, 1]] *= 0.0"
# the hand fix: the write goes into a copy of the pooled result
POOL_HAND = POOL.replace(POOL_WRITE, "        pooled = pooled.clone()\n" + POOL_WRITE)

# the function form and the index reduction, the write a method
INDEX = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def main():
        torch.manual_seed(0)
        lin = nn.Linear(3, 3)
        src = torch.sigmoid(lin(torch.randn(6, 3)))
        rows = torch.tensor([0, 2, 0, 1, 2, 1])
        acc = torch.ones(3, 3).index_reduce(0, rows, src, "prod", include_self=False)
        acc.clamp_(max=0.5)
        acc.sum().backward()
        return [lin.weight.grad]
""")
INDEX_WRITE = "    acc.clamp_(max=0.5)"
INDEX_HAND = INDEX.replace(INDEX_WRITE, "    acc = acc.clamp(max=0.5)")

FUNCTION = POOL.replace("pooled = pooled.scatter_reduce(-1, ids, w, reduce=\"amax\")",
                        "pooled = torch.scatter_reduce(pooled, -1, ids, w, \"sum\", include_self=False)")
FUNCTION_HAND = FUNCTION.replace(POOL_WRITE, "        pooled = pooled.clone()\n" + POOL_WRITE)


def _line(source: str, text: str) -> int:
    return source.splitlines().index(text) + 1


@pytest.mark.parametrize("source,write,hand", [(POOL, POOL_WRITE, POOL_HAND), (INDEX, INDEX_WRITE, INDEX_HAND),
                                               (FUNCTION, POOL_WRITE, FUNCTION_HAND)],
                         ids=["scatter_reduce_method", "index_reduce", "scatter_reduce_function"])
def test_write_into_a_reduction_result_is_proven_and_fixed(source, write, hand):
    assert raises_inplace(source)
    line = _line(source, write)
    assert any(found == line for _, found in proven(source)), proven(source)
    fixed = fixed_source(source, Settings(), project=True)
    assert fixed != source
    got, want = run_program(fixed), run_program(hand)
    for g, w in zip(got, want, strict=True):
        assert torch.allclose(g, w), fixed


# look-alikes that run: ops of the family that save nothing of their result
SAVES_NOTHING = {
    "scatter_add": "pooled = pooled.scatter_add(-1, ids, w)",
    "scatter": "pooled = pooled.scatter(-1, ids, w)",
    "index_put": "pooled = pooled.index_put((torch.arange(2).unsqueeze(-1), ids), w)",
}


@pytest.mark.parametrize("name", sorted(SAVES_NOTHING))
def test_family_members_that_save_nothing_run_and_are_not_proven(name):
    source = POOL.replace("pooled = pooled.scatter_reduce(-1, ids, w, reduce=\"amax\")", SAVES_NOTHING[name])
    assert not raises_inplace(source)
    assert not any(found == _line(source, POOL_WRITE) for _, found in proven(source))
    run_program(fixed_source(source, Settings(), project=True))


def test_the_table_holds_what_every_argument_form_saves():
    # measured over each reduction and include_self (scripts/gen_torch_api.py); the source is input 3
    assert torch_api.OP_SAVES_MEASURED["scatter_reduce"] == ("input0", "input3", "output")
    assert torch_api.OP_SAVES_MEASURED["index_reduce"] == ("input0", "input3", "output")
    assert torch_api.OP_SAVES_MEASURED["scatter_add"] == ()

