"""Issue 24 (default `fix`, fix24d): an in-place method called on a call's result that no name
holds (`fea = branch(x).unsqueeze_(1)`, `h = torch.sigmoid(z).mul_(2.0)`), where autograd saved
that result.

The out-of-place twin (`branch(x).unsqueeze(1)`) changes one thing besides the fix: the object
the call returned is no longer written. That object is seen by no one else where the call
returns a new tensor (a torch op that neither writes in place nor views nor returns its input,
a module whose forward returns such a result) and the code it runs keeps none of its results
(`self.last = out`); and the twin computes the same values where every other operand is a
Python number or the method keeps its receiver's dtype. Each program is written from the
pattern and run with torch: the original raises at backward, the fixed program's gradients
equal an out-of-place control. The negative controls (a module that hands its input back, one
that keeps its output, `torch.Tensor(x)` given a tensor, a tensor operand of another dtype) stay unfixed: there the rewrite would
change what a working program computes.
"""

from __future__ import annotations

import pytest
import torch

from codemod.config import Settings
from tests.test_fix24b_forward_inputs import HEADER, _process, fixed, marks, raises_inplace, run

POSITIVE = {
    # a module of the file (a ModuleList's members) whose forward returns a torch op's result
    "module-list-member": ("""\
class Branch(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return torch.relu(self.fc(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.branches = nn.ModuleList([Branch() for _ in range(2)])

    def forward(self, x):
        feas = []
        for branch in self.branches:
            fea = branch(x).unsqueeze_(dim=1)
            feas.append(fea)
        return torch.cat(feas, dim=1).sum(dim=1)


def main():
    net = Net()
    net(torch.randn(3, 4)).pow(2).sum().backward()
    return [p.grad for p in net.parameters()]
""", "branch(x).unsqueeze_(dim=1)", "branch(x).unsqueeze(dim=1)"),
    # a torch op's result scaled by a number
    "torch-op-number": ("""\
def main():
    w = torch.randn(4, 3, requires_grad=True)
    z = torch.randn(5, 4) @ w
    h = torch.sigmoid(z).mul_(2.0)
    h.pow(2).sum().backward()
    return [w.grad]
""", "torch.sigmoid(z).mul_(2.0)", "torch.sigmoid(z).mul(2.0)"),
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_inplace_method_on_a_fresh_temporary_gets_the_safe_twin(name):
    body, before, after = POSITIVE[name]
    assert raises_inplace(HEADER + body)
    line = next(i for i, text in enumerate(body.splitlines(), 1) if before in text)
    found = [m for m in marks(body) if m[1] == line]
    assert found and found[0][2] == "safe", marks(body)
    result = fixed(body)
    assert after in result
    control = HEADER + body.replace(before, after)
    got, want = run(result), run(control)
    assert len(got) == len(want) and all(torch.equal(g, w) for g, w in zip(got, want))
    assert fixed(result[len(HEADER):]) == result


NEGATIVE = {
    # the module hands its input back: the write reshapes the caller's `x`, read again after
    "returns-its-input": """\
class Gate(nn.Module):
    def forward(self, x):
        return x


def main():
    gate = Gate()
    x = torch.sigmoid(torch.randn(3, 4))
    fea = gate(x).unsqueeze_(dim=1)
    return [fea, x]
""",
    # the module keeps what it returns: the write reaches `net.last`
    "keeps-its-output": """\
class Keep(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.last = None

    def forward(self, x):
        out = torch.sigmoid(self.fc(x))
        self.last = out
        return out


def main():
    keep = Keep()
    with torch.no_grad():
        h = keep(torch.randn(3, 4)).mul_(2.0)
    return [h, keep.last]
""",
    # a legacy constructor given a tensor returns that very tensor: the write reaches `x`
    "legacy-constructor-of-a-tensor": """\
def doubled(x: torch.Tensor):
    return torch.Tensor(x).mul_(2.0)


def main():
    x = torch.randn(3, 4)
    y = doubled(x)
    return [y, x]
""",
    # a tensor operand of a wider dtype: in place keeps half, the twin gives float32
    "wider-operand": """\
def main():
    z = torch.randn(5, 4).half()
    scale = torch.full((5, 4), 1.0 / 3.0)
    h = torch.sigmoid(z).mul_(scale)
    return [h]
""",
}


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_inplace_method_on_a_temporary_others_see_stays_unfixed(name):
    body = NEGATIVE[name]
    assert fixed(body) == HEADER + body
    every = _process(body, Settings(select=("IPF0", "IPF1")), fix=True)  # the unproven tier too
    assert not every.changed, every.fixed
    control = body.replace(".unsqueeze_(", ".unsqueeze(").replace(".mul_(", ".mul(")
    assert control != body
    got, want = run(HEADER + body), run(HEADER + control)
    assert any(g.shape != w.shape or g.dtype != w.dtype or not torch.equal(g, w) for g, w in zip(got, want))
