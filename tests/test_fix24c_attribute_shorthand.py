"""Issue 24 (default `fix`, fix24c): an attribute set in the same call and read into a local
shorthand before an in-place update of the attribute (``self.t = ...; t = self.t; ...;
self.t.mul_(a).add_(b)``).

The rebinding fix (``self.t = self.t.mul(a).add(b)``) was unsafe (``held-elsewhere``: "line N
binds another name to it") although the shorthand is never read after the update: only the
holders of the old tensor that read it afterwards could see a difference. The shorthand counts
as no holder where it is a local name read only as an operand of arithmetic (no call, container
or attribute keeps it) and never after the update (nor in a loop around it). Read after the
update, it stays a holder. Programs written from the pattern, run with torch.
"""

from __future__ import annotations

import torch

from codemod.config import Settings
from codemod.engine.pipeline import process_source
from tests.programs import fixed_source, raises_inplace, run_program

HEADER = "import torch\nimport torch.nn as nn\n\n\n"

SMOOTH = """\
class Smooth(nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.eps = eps
        self.logsm = nn.LogSoftmax(dim=-1)

    def forward(self, logits, labels):
        logp = self.logsm(logits)
        self.onehot = torch.zeros_like(logits).scatter_(1, labels.unsqueeze(1), 1)
        hot = self.onehot
        weight = torch.exp(logp) * hot + (1 - hot)
        logp = logp * weight
        self.onehot.mul_(1 - self.eps).add_(self.eps / logits.size(-1))
        return -(self.onehot * logp).sum(-1).mean()


def main():
    torch.manual_seed(0)
    crit = Smooth(0.1)
    logits = torch.randn(4, 5, requires_grad=True)
    crit(logits, torch.tensor([0, 1, 2, 3])).backward()
    return [logits.grad, crit.onehot]
"""
WRITE = "        self.onehot.mul_(1 - self.eps).add_(self.eps / logits.size(-1))\n"
CONTROL = SMOOTH.replace(WRITE, "        self.onehot = self.onehot.mul(1 - self.eps).add(self.eps / logits.size(-1))\n")
# the shorthand is read after the update: in place it sees the smoothing, rebound it would not
READ_AFTER = SMOOTH.replace("        return -(self.onehot * logp).sum(-1).mean()\n",
                            "        return -(hot * logp).sum(-1).mean()\n")


def run(source: str):
    return run_program(source)


def raises(source: str) -> bool:
    return raises_inplace(source)


def at_write(body: str, select: str = "IPF1"):
    result = process_source((HEADER + body).encode(), "case.py", Settings(select=(select,)))
    line = (HEADER + body)[:(HEADER + body).index(WRITE)].count("\n") + 1
    return [(f.status.value if f.status else None, f.reason) for f in result.findings if f.span.line == line]


def fixed(body: str) -> str:
    return fixed_source(HEADER + body)


def test_a_shorthand_not_read_after_the_update_is_no_holder():
    assert raises(HEADER + SMOOTH)
    assert at_write(SMOOTH) == [("safe", None)], at_write(SMOOTH)
    result = fixed(SMOOTH)
    for got, want in zip(run(result), run(HEADER + CONTROL)):
        assert torch.equal(got, want)
    assert fixed(result[len(HEADER):]) == result


def test_a_shorthand_read_after_the_update_stays_a_holder():
    assert raises(HEADER + READ_AFTER)
    found = at_write(READ_AFTER)
    assert found and all(status != "safe" for status, _ in found), found
    assert fixed(READ_AFTER) == HEADER + READ_AFTER


# the update runs in a loop whose next turn reads the shorthand again: it sees the update in place
LOOPED = SMOOTH.replace(
    "        weight = torch.exp(logp) * hot + (1 - hot)\n        logp = logp * weight\n" + WRITE,
    "        for _ in range(2):\n            weight = torch.exp(logp) * hot + (1 - hot)\n            logp = logp * weight\n    "
    + WRITE)


def test_a_shorthand_read_again_in_a_loop_around_the_update_stays_a_holder():
    assert LOOPED != SMOOTH
    assert raises(HEADER + LOOPED)
    found = at_write(LOOPED, "ALL")  # (the possible tier here: IPF203)
    assert found and all(status != "safe" for status, _ in found), found
    assert fixed(LOOPED) == HEADER + LOOPED
