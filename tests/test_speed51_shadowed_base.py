"""A class named like the base it extends (``class GCNConv(GCNConv)`` over an imported
``GCNConv``), or a chain of bases that comes back to a class through a later definition of a
name, made the walk up a template method's chain of bases (``injected.overrides``) loop forever:
it resolved a base by the *last* class of that name in the file, which is the class itself (or
one below it). The base is what the name holds where the class statement runs: an import, or a
class defined above it. ``check`` stalled on such a file (dive-into-graphs: ``lsgraph`` models).

The guard counts the calls of the walk's per-step query (``class_attrs``) instead of timing: a
chain of the file's classes is at most as long as the file has classes.
"""

from __future__ import annotations

import textwrap

import pytest

from codemod.analysis.classes import Classes
from codemod.config import Settings
from tests.programs import process_in_project, raises_inplace

# the imported base's `forward` (a sigmoid, which saves its result) runs: the program raises;
# the analysis does not see the base, so it proves nothing at the write (a miss, not a proof)
SHADOWED = textwrap.dedent("""\
    import torch
    from torch.nn import Sigmoid


    class Sigmoid(Sigmoid):
        def run(self, x):
            h = self.forward(x)
            h += 1.0
            return h


    def main():
        x = torch.randn(3, 4, requires_grad=True)
        Sigmoid().run(x).sum().backward()
        return [x.grad]
""")

# the same with a name that does not shadow the base: the answer the shadowing one must give
RENAMED = SHADOWED.replace("class Sigmoid(Sigmoid):", "class MySigmoid(Sigmoid):").replace(
    "Sigmoid().run", "MySigmoid().run")

# `Head` is redefined below `Scaled`, from it: its first base is the first `Head`, and the last
# `Head`'s chain is Head -> Scaled -> (first) Head, which the file shows
CHAIN = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Head(nn.Module):
        def forward(self, x):
            h = self.activate(x)
            h += 1.0
            return h

        def activate(self, x):
            raise NotImplementedError


    class Scaled(Head):
        pass


    class Head(Scaled):
        def run(self, x):
            return self.activate(x)


    def main():
        x = torch.randn(3, 4, requires_grad=True)
        Head()(x).sum().backward()
        return [x.grad]
""")

LIMIT = 5000


@pytest.fixture
def bounded(monkeypatch):
    """Fail (instead of hanging) once the per-class query runs far more often than any file
    of a few classes needs."""
    real = Classes.class_attrs
    calls = [0]

    def counted(self, cls):
        calls[0] += 1
        if calls[0] > LIMIT:
            raise AssertionError(f"class_attrs called over {LIMIT} times: a walk over the bases does not end")
        return real(self, cls)

    monkeypatch.setattr(Classes, "class_attrs", counted)
    return calls


def _findings(source: str) -> list:
    found = process_in_project(source, Settings()).findings
    return [(f.code, f.span.line, f.span.column) for f in found]


def test_a_class_shadowing_its_imported_base_ends_and_proves_nothing_more(bounded):
    assert raises_inplace(SHADOWED)
    assert raises_inplace(RENAMED)
    got = _findings(SHADOWED)
    assert bounded[0] < 100
    assert got == _findings(RENAMED)
    line = SHADOWED.splitlines().index("        h += 1.0") + 1
    assert not [c for c, at, _ in got if c.startswith("IPF1") and at == line]


def test_a_chain_through_a_later_definition_of_a_name_ends(bounded):
    # `activate` is abstract in every class the chain shows: the program raises NotImplementedError
    with pytest.raises(NotImplementedError):
        from tests.programs import run_program
        run_program(CHAIN)
    _findings(CHAIN)
    assert bounded[0] < 100
