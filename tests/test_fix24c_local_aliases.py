"""Issue 24 (default `fix`, fix24c): a write through one of several local names bound to the same
tensor (``d = b.exp_()`` then ``d *= 5``, or ``y = x`` then ``y += 1``).

The fix rebinds every such name that is read later (``d = b = d * 5``). It was always unsafe
(``alias``). It is safe where the names are all the references there are: each is a local name
of the function (no attribute, no parameter, not global or nonlocal) bound by exactly one
binding that reaches the write on every path (so the alias holds on every path), and nothing
else holds the tensor (no loop's iterable, container or attribute it was taken from). Then every
reader of the tensor reads it through one of the rebound names, and sees the same values as
in place. Programs written from the pattern, run with torch: the original raises at backward,
the safe fix's gradients equal an out-of-place control. Negative controls: the alias made on one
path only, a container holding the tensor, a caller's tensor, stay unsafe.
"""

from __future__ import annotations

import torch

from codemod.config import Settings
from codemod.engine.pipeline import process_source
from tests.programs import fixed_source, raises_inplace, run_program

HEADER = "import torch\n\n\n"

EXP_ALIAS = """\
def main():
    torch.manual_seed(0)
    w = torch.rand(3, requires_grad=True)
    h = w * 2
    g = h.exp_()
    g *= 3
    out = (h + g).sum()
    out.backward()
    return [w.grad, h.detach(), g.detach()]
"""
EXP_CONTROL = EXP_ALIAS.replace("    g = h.exp_()\n    g *= 3\n", "    g = h.exp()\n    g = h = g * 3\n")

NAME_ALIAS = """\
def main():
    torch.manual_seed(0)
    w = torch.rand(3, requires_grad=True)
    h = torch.sigmoid(w)
    y = h
    y += 1
    out = (h * y).sum()
    out.backward()
    return [w.grad]
"""
NAME_CONTROL = NAME_ALIAS.replace("    y += 1\n", "    y = h = y + 1\n")


# a helper of the file that keeps nothing it is given: the name stays all the references
READ_ONLY_HELPER = """\
def total(t):
    return t.sum() * 2


def main():
    torch.manual_seed(0)
    w = torch.rand(3, requires_grad=True)
    y = torch.sigmoid(w)
    s = total(y)
    y += 1
    (s * y).sum().backward()
    return [w.grad]
"""
READ_ONLY_CONTROL = READ_ONLY_HELPER.replace("    y += 1\n", "    y = y + 1\n")


def test_a_name_handed_to_a_helper_that_keeps_nothing_keeps_the_safe_fix():
    assert raises(HEADER + READ_ONLY_HELPER)
    line = READ_ONLY_HELPER.splitlines().index("    y += 1") + 1
    assert (line, "safe", None) in findings(READ_ONLY_HELPER), findings(READ_ONLY_HELPER)
    for got, want in zip(run(fixed(READ_ONLY_HELPER)), run(HEADER + READ_ONLY_CONTROL)):
        assert torch.equal(got, want)


def findings(body: str):
    result = process_source((HEADER + body).encode(), "case.py", Settings(select=("IPF1",)))
    return [(f.span.line - 3, f.status.value if f.status else None, f.reason) for f in result.findings]


def fixed(body: str) -> str:
    return fixed_source(HEADER + body)


def run(source: str):
    return run_program(source)


def raises(source: str) -> bool:
    return raises_inplace(source)


def test_a_local_identity_alias_gets_the_safe_fix():
    for body, control, line in ((EXP_ALIAS, EXP_CONTROL, 6), (NAME_ALIAS, NAME_CONTROL, 6)):
        assert raises(HEADER + body)
        assert (line, "safe", None) in findings(body), findings(body)
        result = fixed(body)
        for got, want in zip(run(result), run(HEADER + control)):
            assert torch.equal(got, want)
        assert fixed(result[len(HEADER):]) == result  # a fixed point


NEGATIVE = {
    # the alias is made on one path only: rebinding `h` too would change it on the other
    "alias-on-one-path": """\
def main(flag=True):
    torch.manual_seed(0)
    w = torch.rand(3, requires_grad=True)
    h = torch.sigmoid(w)
    y = w.exp()
    if flag:
        y = h
    y += 1
    (h * y).sum().backward()
    return [w.grad]
""",
    # a list holds the tensor: it would not see a rebinding
    # a list holds the tensor (put there after it was made): it would not see a rebinding
    "held-by-a-list": """\
def main():
    torch.manual_seed(0)
    w = torch.rand(3, requires_grad=True)
    h = torch.sigmoid(w)
    keep = [h]
    y = h
    y += 1
    (keep[0] * y).sum().backward()
    return [w.grad]
""",
    # one name, kept by a list before the write (main's safe tier rewrote it: `keep[0]` then
    # kept the old values)
    "one-name-held-by-a-list": """\
def main():
    torch.manual_seed(0)
    w = torch.rand(3, requires_grad=True)
    y = torch.sigmoid(w)
    keep = []
    keep.append(y)
    y += 1
    (keep[0] * y).sum().backward()
    return [w.grad]
""",
    # a helper of the file keeps what it is given
    "kept-by-a-helper": """\
STORE = []


def remember(t):
    STORE.append(t)
    return t.sum()


def main():
    torch.manual_seed(0)
    w = torch.rand(3, requires_grad=True)
    y = torch.sigmoid(w)
    remember(y)
    y += 1
    (STORE[0] * y).sum().backward()
    return [w.grad]
""",
}


# what each negative's grad-off twin returns: the holder the rewrite would leave stale
WORKING_RETURN = {"alias-on-one-path": "return [h, y]", "held-by-a-list": "return [keep[0], y]",
                  "one-name-held-by-a-list": "return [keep[0], y]", "kept-by-a-helper": "return [STORE[0], y]"}


def test_an_alias_that_is_not_all_the_references_stays_unsafe():
    for name, body in NEGATIVE.items():
        found = [m for m in findings(body) if m[0] == body.splitlines().index("    y += 1") + 1]
        assert found and all(m[1] != "safe" for m in found), (name, findings(body))
        assert fixed(body) == HEADER + body, name
        # with grad off the program works, and the rewrite would change what it computes
        off = (HEADER + body).replace("requires_grad=True", "requires_grad=False").replace(
            ".sum().backward()", ".sum()").replace("return [w.grad]", WORKING_RETURN[name])
        control = off.replace("    y += 1\n", "    y = y + 1\n")
        assert any(not torch.equal(g, c) for g, c in zip(run(off), run(control))), name
