"""Issue 24 (default `fix`, fix52): a module's `forward` writes into its input in place, and
every caller passes a new leaf (`x = torch.randn(..., requires_grad=True)`) that it reads after
the call only for its gradient (`x.grad`): the bug report's test harness. Rebinding the input
(`x = x * mask`) takes the write away from the caller's tensor; a read of its `.grad` cannot see
that: on a leaf that requires grad the write raises where grad is on (the report's error) and
under `no_grad` changes values, never the gradient; a leaf that does not require grad and turns
non-leaf by the write has no `.grad` either way. So the fix is safe there (arguments.
own_values_passed, `_gradient_reads`). Controls that stay unsafe: the caller reads the tensor's
values after the call, the tensor is a module's output (not a leaf), or the caller retains its
gradient (`retain_grad`: then `.grad` does see the write, shown with torch below).
"""

from __future__ import annotations

import textwrap

import torch

from codemod.config import Settings
from tests.programs import process_in_project, run_program

HEADER = "import torch\nimport torch.nn as nn\n\n\n"
OFFSET = HEADER.count("\n")

MASKED = """\
class Masked(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x, mask=None):
        if mask is not None:
            x = x.mul_(mask)
        return self.fc(x)


"""
WRITE_LINE = 8  # `x = x.mul_(mask)` in MASKED, after the header

LEAF_GRAD = """\
def main():
    net = Masked(6)
    x = torch.randn(4, 6, requires_grad=True)
    mask = (torch.rand(4, 6) > 0.3).float()
    y = net(x, mask=mask)
    y.pow(2).sum().backward()
    return [x.grad, net.fc.weight.grad, net.fc.bias.grad]
"""

NORM = """\
class Norm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        x /= x.pow(2).sum(dim=-1, keepdim=True).sqrt()
        return self.fc(x)


"""
NORM_LINE = 7

NORM_LEAF_GRAD = """\
def main():
    net = Norm(6)
    inputs = torch.randn(4, 6, requires_grad=True)
    out = net(inputs)
    out.sum().backward()
    return [inputs.grad.clone(), net.fc.weight.grad]
"""


def _marks(source: str):
    result = process_in_project(source, Settings(select=("IPF1",)))
    return [(f.span.line - OFFSET, f.status.value if f.status else None, f.reason) for f in result.findings]


def _fixed(source: str) -> str:
    result = process_in_project(source, Settings(), fix=True)
    return result.fixed if result.changed else source


def _raises(source: str, text: str) -> bool:
    try:
        run_program(source)
    except RuntimeError as error:
        return text in str(error)
    return False


def _same(a, b) -> bool:
    return len(a) == len(b) and all(torch.allclose(x, y, atol=1e-6) for x, y in zip(a, b))


def test_a_leaf_input_read_after_only_for_its_grad_is_fixed_safely():
    original = HEADER + MASKED + LEAF_GRAD
    assert _raises(original, "leaf Variable that requires grad")  # the report's error
    assert [m for m in _marks(original) if m[0] == WRITE_LINE] == [(WRITE_LINE, "safe", None)]
    fixed = _fixed(original)
    assert fixed != original and "mul_" not in fixed
    control = original.replace("x = x.mul_(mask)", "x = x * mask")
    assert _same(run_program(fixed), run_program(control))


def test_a_leaf_input_whose_grad_is_read_and_cloned_is_fixed_safely():
    original = HEADER + NORM + NORM_LEAF_GRAD
    assert _raises(original, "leaf Variable that requires grad")
    assert [m[1] for m in _marks(original) if m[0] == NORM_LINE] == ["safe"]
    fixed = _fixed(original)
    assert "x /=" not in fixed
    control = original.replace("x /= x.pow(2).sum(dim=-1, keepdim=True).sqrt()",
                               "x = x / x.pow(2).sum(dim=-1, keepdim=True).sqrt()")
    assert _same(run_program(fixed), run_program(control))


# the caller reads the leaf's values after the call: under no_grad the write is what it sees
VALUES_READ = LEAF_GRAD.replace("return [x.grad,", "return [x.detach().clone(), x.grad,")
VALUES_NO_GRAD = """\
def main():
    net = Masked(6)
    x = torch.randn(4, 6, requires_grad=True)
    mask = (torch.rand(4, 6) > 0.3).float()
    with torch.no_grad():
        y = net(x, mask=mask)
    return [x.detach().clone(), x.grad]
"""

# not a leaf: the caller's tensor is a module's output, its gradient retained
RETAINED = """\
def main():
    net = Masked(6)
    proj = nn.Linear(3, 6)
    x = proj(torch.randn(4, 3))
    x.retain_grad()
    mask = (torch.rand(4, 6) > 0.3).float()
    y = net(x, mask=mask)
    y.pow(2).sum().backward()
    return [x.grad]
"""

# a new leaf that does not require grad, its gradient retained after the write made it a non-leaf
LEAF_RETAINED = """\
def main():
    net = Masked(6)
    x = torch.zeros(4, 6)
    w = torch.rand(4, 6, requires_grad=True)
    y = net(x, mask=w)
    x.retain_grad()
    y.pow(2).sum().backward()
    return [x.grad]
"""


def test_a_leaf_input_whose_values_are_read_after_stays_unsafe():
    source = HEADER + MASKED + VALUES_READ
    assert all(m[1] != "safe" for m in _marks(source) if m[0] == WRITE_LINE), _marks(source)
    assert [m for m in _marks(source) if m[0] == WRITE_LINE]
    # what the rewrite would change in a working program: the caller's values under no_grad
    working = HEADER + MASKED + VALUES_NO_GRAD
    assert all(m[1] != "safe" for m in _marks(working) if m[0] == WRITE_LINE)
    rewritten = working.replace("x = x.mul_(mask)", "x = x * mask")
    assert not torch.equal(run_program(working)[0], run_program(rewritten)[0])


def test_a_retained_gradient_stays_unsafe():
    for body in (RETAINED, LEAF_RETAINED):
        source = HEADER + MASKED + body
        assert all(m[1] != "safe" for m in _marks(source) if m[0] == WRITE_LINE), (body, _marks(source))
    # the retained `.grad` does see the write: in place it is the gradient after the mask
    source = HEADER + MASKED + RETAINED
    rewritten = source.replace("x = x.mul_(mask)", "x = x * mask")
    assert not torch.equal(run_program(source)[0], run_program(rewritten)[0])
    # and a leaf made non-leaf by the write can be retained only in place
    source = HEADER + MASKED + LEAF_RETAINED
    run_program(source)
    assert _raises(source.replace("x = x.mul_(mask)", "x = x * mask"), "requires_grad=False")


def test_a_leaf_input_flagged_alone_stays_unsafe():
    """A file checked alone: any file may import the class and pass it anything (review34)."""
    from codemod.engine.pipeline import process_source

    source = textwrap.dedent(HEADER + MASKED + LEAF_GRAD)
    result = process_source(source.encode(), "case.py", Settings(select=("IPF1",)))
    assert [f.status.value for f in result.findings if f.span.line - OFFSET == WRITE_LINE] == ["unsafe"]
