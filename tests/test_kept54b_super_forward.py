"""Issue 24 (default `fix`, kept54b): `out = super().forward(x); out += r` writes into what the
parent class's `forward` returned. Where the parent is a class of the file (its one base, no
metaclass, no `__getattr__`), the call runs that `forward`, and it keeps its result only where
its own body shows so (kept.py's per-function keeps). Until kept54b the call counted as an
unseen callee (kept54: "held-elsewhere", unsafe tier) although the file shows the callee
(siamese-triplet's `EmbeddingNetL2`). Controls: a parent whose `forward` keeps its output
(`self.last = y`) stays unsafe; a parent from a file that is not in the run stays unsafe; a
subclass that replaces an attribute the parent's `forward` reads stays unsafe.
"""

from __future__ import annotations

import pathlib
import tempfile

import pytest
import torch

from codemod.config import Settings
from codemod.engine.pipeline import process_source
from codemod.engine.project import build_index
from tests.programs import OTHER_FILE

PARENT = """\
class Parent(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        y = self.fc(x)
        KEEP
        return y


"""

CHILD = """\
class Child(Parent):
    def __init__(self):
        super(Child, self).__init__()
        INIT

    def forward(self, x, r):
        out = SUPER.forward(x)
        g = torch.sin(out)
        out += r
        return out + g


def make():
    torch.manual_seed(0)
    return Child()
"""

HEAD = "import torch\nimport torch.nn as nn\nIMPORT\n\n"
WRITE = "        out += r\n"
REWRITTEN = "        out = out + r\n"


def _case(keep: str = "pass", sup: str = "super(Child, self)", init: str = "pass", imported: bool = False) -> str:
    parent = PARENT.replace("KEEP", keep)
    head = HEAD.replace("IMPORT", "from parent import Parent" if imported else "")
    return head + ("" if imported else parent) + CHILD.replace("SUPER", sup).replace("INIT", init)


def _parent_file(keep: str) -> str:
    return HEAD.replace("IMPORT", "") + PARENT.replace("KEEP", keep)


def _process(case: str, fix: bool):
    with tempfile.TemporaryDirectory() as tmp:
        pathlib.Path(tmp, "case.py").write_text(case)
        pathlib.Path(tmp, "other.py").write_text(OTHER_FILE)
        # parent.py (where imported) is no file of the run: its code is unseen
        index = build_index([str(pathlib.Path(tmp, n)) for n in ("case.py", "other.py")])
        result = process_source(case.encode(), str(pathlib.Path(tmp, "case.py")), Settings(), fix=fix,
                                project=index, module_name="case")
    assert result.error is None, result.error
    return result


def _verdicts(case: str):
    return [(f.status.value if f.status else None, f.reason) for f in _process(case, False).findings
            if "out += r" in f.message or "`out`" in f.message]


def _fixed(case: str) -> str:
    result = _process(case, True)
    return result.fixed if result.changed else case


def _run(case: str, parent: str = ""):
    """Train one step of the block; return the output, the gradients, and what the parent kept."""
    import sys
    with tempfile.TemporaryDirectory() as tmp:
        pathlib.Path(tmp, "parent.py").write_text(parent)
        sys.path.insert(0, tmp)
        try:
            sys.modules.pop("parent", None)
            space: dict = {"__name__": "case"}
            exec(compile(case, "case.py", "exec"), space)
            net = space["make"]()
            x, r = torch.randn(3, 4), torch.randn(3, 4)
            out = net(x, r)
            out.sum().backward()
            kept = getattr(net, "last", None)
            return (out.detach().clone(), [p.grad.clone() for p in net.parameters()],
                    kept.detach().clone() if kept is not None else None)
        finally:
            sys.path.remove(tmp)
            sys.modules.pop("parent", None)


@pytest.mark.parametrize("sup", ["super(Child, self)", "super()"])
def test_a_parent_forward_of_the_file_that_keeps_nothing_gets_the_safe_fix(sup):
    case = _case(sup=sup)
    assert ("safe", None) in _verdicts(case)
    fixed = _fixed(case)
    assert REWRITTEN in fixed
    with pytest.raises(RuntimeError, match="inplace"):
        _run(case)
    out, grads, _ = _run(fixed)
    ref_out, ref_grads, _ = _run(case.replace(WRITE, "        out = out.clone()\n        out += r\n"))
    assert torch.allclose(out, ref_out) and all(torch.allclose(a, b) for a, b in zip(grads, ref_grads))


def _unsafe(case: str) -> None:
    verdicts = _verdicts(case)
    assert verdicts and all(status != "safe" for status, _ in verdicts), verdicts
    assert REWRITTEN not in _fixed(case)


@pytest.mark.parametrize("sup", ["super(Child, self)", "super()"])
def test_a_parent_forward_that_keeps_its_output_stays_unsafe(sup):
    keep = "self.last = y"
    case = _case(keep=keep, sup=sup)
    _unsafe(case)
    # What the safe rewrite would do: the kept tensor loses the write.
    out, _, kept = _run(case.replace(WRITE, "        out = out.clone()\n        out += r\n"))
    out2, _, kept2 = _run(case.replace(WRITE, REWRITTEN))
    assert torch.allclose(out, out2) and kept is not None and kept2 is not None


def test_a_parent_forward_that_keeps_its_output_loses_the_write_under_the_rewrite():
    """The kept tensor (`self.last`) sees `out += r` in the program as written (without the
    saved-tensor use, so it runs); the rewrite would leave it without."""
    case = _case(keep="self.last = y").replace("        g = torch.sin(out)\n", "        g = 0\n")
    _, _, kept = _run(case)
    _, _, kept2 = _run(case.replace(WRITE, REWRITTEN))
    assert not torch.equal(kept, kept2)


def test_a_parent_of_a_file_not_in_the_run_stays_unsafe():
    case = _case(imported=True)
    _unsafe(case)


def test_a_subclass_that_replaces_what_the_parent_forward_reads_stays_unsafe():
    """`self.fc = Keeper()` in the subclass: the parent's `forward` runs the subclass's keeper."""
    keeper = "class Keeper(nn.Module):\n    def forward(self, x):\n        self.last = x * 2\n        return self.last\n\n\n"
    case = _case(init="self.fc = Keeper()").replace("class Child(", keeper + "class Child(")
    _unsafe(case)


def test_a_named_super_of_another_class_stays_unsafe():
    """`super(Parent, self).forward(x)` skips Parent: it runs nn.Module's forward, not Parent's."""
    case = _case(sup="super(Parent, self)")
    verdicts = _verdicts(case)
    assert all(status != "safe" for status, _ in verdicts), verdicts


def test_a_parent_forward_that_reads_attributes_by_name_stays_unsafe():
    """`getattr(self, "fc")` may read what the subclass stores: the names are not seen."""
    keeper = "class Keeper(nn.Module):\n    def forward(self, x):\n        self.last = x * 2\n        return self.last\n\n\n"
    case = _case(init="self.head = Keeper()").replace("class Child(", keeper + "class Child(").replace(
        "        y = self.fc(x)\n", "        y = getattr(self, 'head', self.fc)(x)\n")
    _unsafe(case)
