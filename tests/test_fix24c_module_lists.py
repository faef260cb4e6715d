"""Issue 24 (default `fix`, fix24c): a module's ``forward`` that writes into its input in place,
where every instance of the class sits in an ``nn.ModuleList`` the file builds
(``self.blocks = nn.ModuleList([Block(d) for _ in range(n)])``) and is only called, by a loop
over the list (``for blk in self.blocks: x = blk(x)``) or by index (``self.blocks[i](x)``).

fix24b's rule (tests/test_fix24b_forward_inputs.py) made the rewrite safe where the class is
built into a name or a ``self.<attr>`` that is only called, and every call passes a tensor that
nothing sees afterwards; an instance built inside a list was "handed on" and its fix unsafe
(``param-mutation``), although a transformer's stack of blocks is the commonest way to hold
them. The list now counts as a holder whose every use is seen: iterated by a ``for`` whose
variable is only called, indexed and called, or asked for ``len``. Any other use of the list
(spread into a ``Sequential``, returned, passed on, a hook on a member) keeps it unsafe.
Each program is written from the pattern and run with torch: the original raises at backward,
the fixed program's gradients equal an out-of-place control; each negative control is a working
(grad-off) program whose result the rewrite would change.
"""

from __future__ import annotations

import pytest
import torch

from tests.test_fix24b_forward_inputs import HEADER, NORM, NORM_CONTROL, WRITE_LINE, fixed, marks, raises_inplace, run

# A residual block that adds into its input and returns it (a GPT block's `x += attn(ln(x))`),
# its norm a module of the file, the stack an entry of a ModuleDict fed through a dropout.
RESIDUAL = """\
class Norm2(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = nn.Parameter(torch.ones(d))

    def forward(self, inp):
        return torch.nn.functional.layer_norm(inp, self.w.shape, self.w, None, 1e-5)


class Res(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = Norm2(d)
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        x += self.fc(self.ln(x))
        return x


class Net(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.parts = nn.ModuleDict(dict(
            emb=nn.Embedding(7, 4),
            drop=nn.Dropout(0.0),
            h=nn.ModuleList([Res(4) for _ in range(n)]),
        ))

    def forward(self, idx):
        h = self.parts.drop(self.parts.emb(idx) * 2)
        for blk in self.parts.h:
            h = blk(h)
        return h
"""
RESIDUAL_WRITE = "        x += self.fc(self.ln(x))\n"
RESIDUAL_LINE = (HEADER + RESIDUAL)[:(HEADER + RESIDUAL).index(RESIDUAL_WRITE)].count("\n") + 1 - HEADER.count("\n")
RESIDUAL_CONTROL = RESIDUAL.replace(RESIDUAL_WRITE, "        x = x + self.fc(self.ln(x))\n")
RESIDUAL_MAIN = """

def main():
    torch.manual_seed(0)
    net = Net(2)
    net(torch.tensor([1, 2, 3])).sum().backward()
    return [p.grad for p in net.parameters()]
"""
# the block keeps what it returns: the next block's write reaches `last` in the original
RESIDUAL_KEEPS = RESIDUAL.replace("        x += self.fc(self.ln(x))\n        return x\n",
                                  "        x += self.fc(self.ln(x))\n        self.last = x\n        return x\n")
RESIDUAL_KEEPS_MAIN = """

def main():
    torch.manual_seed(0)
    net = Net(2)
    with torch.no_grad():
        out = net(torch.tensor([1, 2, 3]))
    return [out, net.parts.h[0].last]
"""


def test_a_residual_block_stack_in_a_module_dict_is_fixed_safely():
    body = RESIDUAL + RESIDUAL_MAIN
    assert raises_inplace(HEADER + body)
    found = [m for m in marks(body) if m[1] == RESIDUAL_LINE]
    assert found and all(m[2] == "safe" for m in found), marks(body)
    result = fixed(body)
    assert "x = x + self.fc(self.ln(x))" in result
    for g, w in zip(run(result), run(HEADER + RESIDUAL_CONTROL + RESIDUAL_MAIN)):
        assert torch.equal(g, w)
    assert fixed(result[len(HEADER):]) == result


def test_a_residual_block_that_keeps_its_output_stays_unsafe():
    body = RESIDUAL_KEEPS + RESIDUAL_KEEPS_MAIN
    found = [m for m in marks(body) if m[1] == RESIDUAL_LINE]
    assert found and all(m[2] != "safe" for m in found), found
    assert fixed(body) == HEADER + body
    control = RESIDUAL_KEEPS.replace(RESIDUAL_WRITE, "        x = x + self.fc(self.ln(x))\n") + RESIDUAL_KEEPS_MAIN
    got, want = run(HEADER + body), run(HEADER + control)
    assert any(not torch.equal(g, w) for g, w in zip(got, want))

POSITIVE = {
    "loop-over-list": """\
class Net(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.proj = nn.Linear(3, 4)
        self.blocks = nn.ModuleList([Norm(4) for _ in range(n)])

    def forward(self, inp):
        h = self.proj(inp)
        for blk in self.blocks:
            h = blk(h)
        return h


def main():
    net = Net(2)
    net(torch.randn(5, 3)).sum().backward()
    return [p.grad for p in net.parameters()]
""",
    "indexed-list": """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 4)
        self.blocks = nn.ModuleList([Norm(4), Norm(4)])

    def forward(self, inp):
        h = self.proj(inp)
        for i in range(len(self.blocks)):
            h = self.blocks[i](h)
        return h


def main():
    net = Net()
    net(torch.randn(5, 3)).sum().backward()
    return [p.grad for p in net.parameters()]
""",
    # the list is one entry of an nn.ModuleDict (a GPT's `transformer.h`)
    "list-in-a-module-dict": """\
class Net(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.parts = nn.ModuleDict(dict(
            proj=nn.Linear(3, 4),
            h=nn.ModuleList([Norm(4) for _ in range(n)]),
        ))

    def forward(self, inp):
        h = self.parts.proj(inp)
        for blk in self.parts.h:
            h = blk(h)
        return h


def main():
    net = Net(2)
    net(torch.randn(5, 3)).sum().backward()
    return [p.grad for p in net.parameters()]
""",
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_forward_input_write_of_list_members_is_fixed_safely(name):
    body = NORM + POSITIVE[name]
    original = HEADER + body
    assert raises_inplace(original)  # the hazard is real
    found = [m for m in marks(body) if m[1] == WRITE_LINE]
    assert found and found[0][2] == "safe", marks(body)
    result = fixed(body)
    assert "x = x / x.norm(dim=-1, keepdim=True)" in result
    got = run(result)
    want = run(HEADER + NORM_CONTROL + POSITIVE[name])
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert torch.equal(g, w)
    assert fixed(result[len(HEADER):]) == result  # the safe tier is a fixed point


NEGATIVE = {
    # the caller reads its tensor again after the member's call
    "read-after": """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 4)
        self.blocks = nn.ModuleList([Norm(4) for _ in range(2)])

    def forward(self, inp):
        h = self.proj(inp)
        out = h
        for blk in self.blocks:
            out = blk(h) + h
        return out


def main():
    net = Net()
    with torch.no_grad():
        return [net(torch.randn(5, 3))]
""",
    # the list is spread into a Sequential: its calls are not the loop's
    "spread-into-sequential": """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Norm(4) for _ in range(2)])
        self.seq = nn.Sequential(*self.blocks)

    def forward(self, h):
        return self.seq(h)


def main():
    net = Net()
    h = torch.randn(5, 4)
    with torch.no_grad():
        out = net(h)
    return [out, h]
""",
    # the loop's variable is handed on: a hook on the member keeps its input
    "member-hooked": """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.seen = []
        self.blocks = nn.ModuleList([Norm(4) for _ in range(2)])
        for blk in self.blocks:
            blk.register_forward_hook(lambda m, i, o: self.seen.append(i[0]))

    def forward(self, inp):
        h = inp * 2
        for blk in self.blocks:
            h = blk(h)
        return h


def main():
    torch.manual_seed(0)
    net = Net()
    with torch.no_grad():
        out = net(torch.randn(2, 4))
    return [out, net.seen[0]]
""",
    # the list is handed out: its caller calls the members with its own tensor
    "list-returned": """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Norm(4) for _ in range(2)])

    def stages(self):
        return self.blocks


def main():
    net = Net()
    h = torch.randn(5, 4)
    with torch.no_grad():
        out = net.stages()[0](h)
    return [out, h]
""",
    # the module dict is reached from outside its owner: a caller calls a member with its tensor
    "module-dict-from-outside": """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.parts = nn.ModuleDict({"h": nn.ModuleList([Norm(4) for _ in range(2)])})

    def forward(self, inp):
        h = inp * 2
        for blk in self.parts.h:
            h = blk(h)
        return h


def main():
    net = Net()
    v = torch.randn(5, 4)
    with torch.no_grad():
        out = net.parts.h[0](v)
    return [out, v]
""",
    # the module dict's members are handed out by `.values()`
    "module-dict-values": """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.parts = nn.ModuleDict({"h": nn.ModuleList([Norm(4) for _ in range(2)])})

    def forward(self, inp):
        h = inp * 2
        for blk in self.parts.h:
            h = blk(h)
        for stack in self.parts.values():
            stack[0](inp)
        return h


def main():
    net = Net()
    v = torch.randn(5, 4)
    with torch.no_grad():
        out = net(v)
    return [out, v]
""",
}


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_forward_input_write_of_list_members_stays_unsafe_where_a_caller_may_see_it(name):
    body = NORM + NEGATIVE[name]
    found = [m for m in marks(body) if m[1] == WRITE_LINE]
    assert all(m[2] != "safe" for m in found), found
    assert fixed(body) == HEADER + body  # default `fix` leaves it
    got = run(HEADER + body)
    control = run(HEADER + NORM_CONTROL + NEGATIVE[name])
    assert any(not torch.equal(g, w) for g, w in zip(got, control))
