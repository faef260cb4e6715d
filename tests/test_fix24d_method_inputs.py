"""Issue 24 (default `fix`, fix24d): a module's helper method (not `forward`) that writes into a
tensor it is given, after autograd saved it (`x += x.pow(2)...`), called from the module's own
methods as `x, extra = self.helper(x)`.

fix24b made the rewrite (`x = x + ...`) safe for a `forward` whose every caller passes a tensor
nothing sees after the call. The same holds one call further in: the helper is called only as
`self.<helper>(...)` from its class's own methods (no subclass, no other receiver, the name never
handed on, the instance never escaping), and each call passes either a fresh temporary, a local
name bound from a fresh value, or the caller's own parameter where that parameter is itself the
caller's callers' own value (the same rule, followed up a few calls) -- and the caller reads that
tensor no more after the call (or the call's statement rebinds it, `x, extra = self.helper(x)`).
Each program is written from the pattern, run with torch: the original raises at backward, the
fixed program's gradients equal an out-of-place control. The negative controls (a caller reads
its tensor again, the helper called from outside, the method handed on, the instance escaping)
stay unsafe: there the rewrite changes what a working grad-off program computes.
"""

from __future__ import annotations

import pytest
import torch

from tests.test_fix24b_forward_inputs import HEADER, OFFSET, fixed, marks, raises_inplace, run

ENC = """\
class Enc(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 1)

    def mix(self, x, scale=1.0):
        sq = x.pow(2)
        x += scale * sq.mean(dim=-1, keepdim=True)
        return x, sq

    def forward(self, x):
        x, sq = self.mix(x)
        return self.head(x) + sq.sum()


"""
ENC_CONTROL = ENC.replace("x += scale * sq", "x = x + scale * sq")
WRITE_LINE = 8  # `x += ...` in ENC, after the header

POSITIVE = {
    # a temporary (a torch module's fresh output) handed to the module
    "temporary": """\
def main():
    proj = nn.Linear(3, 4)
    enc = Enc()
    out = enc(proj(torch.randn(5, 3)))
    out.sum().backward()
    return [p.grad for p in [*proj.parameters(), *enc.parameters()]]
""",
    # a local name the call's statement rebinds
    "rebound-local": """\
def main():
    proj = nn.Linear(3, 4)
    enc = Enc()
    h = proj(torch.randn(5, 3))
    h = enc(h)
    h.sum().backward()
    return [p.grad for p in [*proj.parameters(), *enc.parameters()]]
""",
    # an owner module's fresh local, two modules up
    "owner-module": """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 4)
        self.enc = Enc()

    def forward(self, inp):
        h = self.proj(inp)
        return self.enc(h)


def main():
    net = Net()
    net(torch.randn(5, 3)).sum().backward()
    return [p.grad for p in net.parameters()]
""",
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_helper_method_input_write_is_fixed_safely_where_callers_pass_their_own_values(name):
    body = ENC + POSITIVE[name]
    original = HEADER + body
    assert raises_inplace(original)  # the hazard is real
    found = [m for m in marks(body) if m[1] == WRITE_LINE]
    assert found and found[0][2] == "safe", marks(body)
    result = fixed(body)
    assert "x = x + scale * sq.mean(dim=-1, keepdim=True)" in result
    got = run(result)
    want = run(HEADER + ENC_CONTROL + POSITIVE[name])
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert torch.equal(g, w)
    assert fixed(result[len(HEADER):]) == result  # the safe tier is a fixed point


NEGATIVE = {
    # the outermost caller reads its tensor again: with grad off it sees the write today
    "read-after-outside": """\
def main():
    enc = Enc()
    h = torch.randn(5, 4)
    with torch.no_grad():
        out = enc(h)
    return [out, h]
""",
    # the helper's own caller reads the tensor again instead of rebinding it
    "read-after-inside": """\
def main():
    enc = Enc()
    with torch.no_grad():
        return [enc(torch.randn(5, 4))]
""",
    # `+h` is `h` itself (torch's `positive` returns its input): no temporary
    "unary-plus": """\
def main():
    enc = Enc()
    h = torch.randn(5, 4)
    with torch.no_grad():
        out = enc(+h)
    return [out, h]
""",
    # the helper called from outside its class, on the instance
    "outside-call": """\
def main():
    enc = Enc()
    h = torch.randn(5, 4)
    with torch.no_grad():
        out, _ = enc.mix(h)
    return [out, h]
""",
    # the method handed on: its calls are not all seen
    "handed-on": """\
def main():
    enc = Enc()
    f = enc.mix
    h = torch.randn(5, 4)
    with torch.no_grad():
        out, _ = f(h)
    return [out, h]
""",
    # a subclass in the file calls the helper and reads the tensor again
    "subclass": """\
class Outer(Enc):
    def forward(self, x):
        y, _ = self.mix(x)
        return y + x


def main():
    enc = Outer()
    with torch.no_grad():
        return [enc(torch.randn(5, 4))]
""",
}


def _negative_body(name: str) -> str:
    if name == "read-after-inside":  # the class itself is the variant: `forward` reads `x` again
        assert "x, sq = self.mix(x)\n        return self.head(x) + sq.sum()" in ENC
        return ENC.replace("x, sq = self.mix(x)\n        return self.head(x) + sq.sum()",
                           "y, sq = self.mix(x)\n        return self.head(y) + x.sum()") + NEGATIVE[name]
    return ENC + NEGATIVE[name]


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_helper_method_input_write_stays_unsafe_where_a_caller_may_see_it(name):
    body = _negative_body(name)
    found = [m for m in marks(body) if m[1] == WRITE_LINE]
    assert found and all(m[2] != "safe" for m in found), found
    assert fixed(body) == HEADER + body  # default `fix` leaves it
    got = run(HEADER + body)
    control = run(HEADER + body.replace("x += scale * sq", "x = x + scale * sq"))
    assert any(not torch.equal(g, w) for g, w in zip(got, control))


def test_offset_matches_the_shared_header():
    assert OFFSET == HEADER.count("\n")


# --------------------- a helper's parameter is a tensor where every `self.<helper>(...)` passes one
POS = """\
class Pos(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Linear(4, 4)
        self.out = nn.Linear(4, 1)

    def add_pos(self, x):
        x_conv = self.conv(x)
        x += x_conv
        return x

    def forward(self, x):
        x = self.add_pos(x)
        return self.out(x)


def main():
    proj = nn.Linear(3, 4)
    pos = Pos()
    pos(proj(torch.randn(5, 3))).sum().backward()
    return [p.grad for p in [*proj.parameters(), *pos.parameters()]]
"""


def test_helper_parameter_kind_comes_from_its_callers():
    """`x` of `add_pos` is used only by a module call and `+=`: its kind is what `forward` passes
    (a tensor: `forward` hands it to a module), so the write gets the safe fix."""
    assert raises_inplace(HEADER + POS)
    found = [m for m in marks(POS) if m[1] == 9]
    assert found and found[0][2] == "safe", marks(POS)
    result = fixed(POS)
    assert "x = x + x_conv" in result
    control = HEADER + POS.replace("x += x_conv", "x = x + x_conv")
    assert all(torch.equal(g, w) for g, w in zip(run(result), run(control)))


# ------------------ an early `return` of the tensor ends the call: it holds nothing the write misses
SHIFT = """\
class Shift(nn.Module):
    def __init__(self, on=True):
        super().__init__()
        self.on = on
        self.bias = nn.Parameter(torch.ones(4))

    def shift(self, logits, w):
        if not self.on:
            return logits, w
        logits += self.bias
        return logits, w

    def forward(self, score, w):
        score, w = self.shift(score, w)
        return score.mul(w).sum(dim=-1)


def main():
    net = nn.Linear(3, 4)
    reg = Shift()
    loss = reg(torch.sigmoid(net(torch.randn(5, 3))), torch.ones(5, 4)).sum()
    loss.backward()
    return [p.grad for p in [*net.parameters(), *reg.parameters()]]
"""
SHIFT_LINE = 10


def test_a_return_before_the_write_is_no_holder():
    assert raises_inplace(HEADER + SHIFT)
    found = [m for m in marks(SHIFT) if m[1] == SHIFT_LINE]
    assert found and found[0][2] == "safe", marks(SHIFT)
    result = fixed(SHIFT)
    assert "logits = logits + self.bias" in result
    control = HEADER + SHIFT.replace("logits += self.bias", "logits = logits + self.bias")
    assert all(torch.equal(g, w) for g, w in zip(run(result), run(control)))


# the write in a `finally` runs after the `return` handed the tensor to the caller: it sees the write
SHIFT_FINALLY = SHIFT.replace("""\
        if not self.on:
            return logits, w
        logits += self.bias
        return logits, w
""", """\
        try:
            if not self.on:
                return logits, w
            return logits * 2, w
        finally:
            logits += self.bias
""").replace("""\
def main():
    net = nn.Linear(3, 4)
    reg = Shift()
    loss = reg(torch.sigmoid(net(torch.randn(5, 3))), torch.ones(5, 4)).sum()
    loss.backward()
    return [p.grad for p in [*net.parameters(), *reg.parameters()]]
""", """\
def train():
    net = nn.Linear(3, 4)
    reg = Shift(on=False)
    return reg(torch.sigmoid(net(torch.randn(5, 3))), torch.ones(5, 4)).sum()


def main():
    reg = Shift(on=False)
    with torch.no_grad():
        return [reg(torch.sigmoid(torch.randn(5, 4)), torch.ones(5, 4))]
""")


def test_a_return_inside_try_finally_still_holds_the_tensor():
    assert "finally:" in SHIFT_FINALLY and "Shift(on=False)" in SHIFT_FINALLY
    found = [m for m in marks(SHIFT_FINALLY) if m[1] == 13]
    assert found and all(m[2] != "safe" for m in found), marks(SHIFT_FINALLY)
    assert fixed(SHIFT_FINALLY) == HEADER + SHIFT_FINALLY
    control = HEADER + SHIFT_FINALLY.replace("logits += self.bias", "logits = logits + self.bias")
    assert not torch.equal(run(HEADER + SHIFT_FINALLY)[0], run(control)[0])
