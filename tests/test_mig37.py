"""Issue 24 (migration sweep, mig37): a write through a name bound by a conditional expression.

``loc = h if rev else w`` then ``loc[..., -1] += 1e-6``: ``loc`` is ``h`` on one path and ``w``
on the other. The safe fix rebound every identity alias to the clone (``loc = h = w =
loc.clone()``), so the name the condition did not pick took the other tensor's values: found by
the migration sweep in transformers' VITS spline (``_rational_quadratic_spline``:
``bin_locations = cumheights if reverse else cumwidths``), where the rewritten model's outputs
and gradients all differed. A single rebinding cannot say "the branch that was taken": the
write stays for the unsafe tier (``alias``), never safe. Programs written from the pattern, run
with torch: the default fix leaves both paths' results equal to the original's. Controls: the
same write through a plain alias (``loc = h``) is still fixed by the safe tier (fix24c), and
equals an out-of-place version.
"""

from __future__ import annotations

import torch

from codemod.config import Settings
from tests.programs import fixed_source, run_program

ALL = Settings(select=("ALL",))  # what the migration ran: `fix --select ALL`

HEADER = "import torch\n\n\n"

# Both tensors are read after the write; the write goes into the one the flag picks.
PICKED = HEADER + """\
def spline(x, w, rev):
    cumw = torch.cumsum(torch.softmax(w, dim=-1), dim=-1)
    cumw = torch.nn.functional.pad(cumw, (1, 0))
    cumw = 2.0 * cumw - 1.0
    cumh = torch.cumsum(torch.softmax(w * 2, dim=-1), dim=-1)
    cumh = torch.nn.functional.pad(cumh, (1, 0))
    cumh = 2.0 * cumh - 1.0
    loc = cumh if rev else cumw
    loc[..., -1] += 1e-6
    idx = (torch.sum(x[..., None] >= loc, dim=-1) - 1)[..., None]
    return cumw.gather(-1, idx)[..., 0] + cumh.gather(-1, idx)[..., 0] * 3


def main():
    torch.manual_seed(0)
    w = torch.rand(3, 6, requires_grad=True)
    x = torch.rand(3) * 2 - 1
    found = []
    for rev in (True, False):
        out = spline(x, w, rev)
        out.sum().backward()
        found += [out.detach(), w.grad.clone()]
        w.grad = None
    return found
"""

# A plain alias (one tensor on every path): the safe fix rebinds both names (fix24c).
PLAIN = PICKED.replace("    loc = cumh if rev else cumw\n", "    loc = cumh\n")


def _equal(got, want) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert torch.equal(g, w)


def test_conditional_alias_is_no_safe_rebinding():
    fixed = fixed_source(PICKED, ALL, project=True)
    assert "cumh = cumw =" not in fixed and "cumw = cumh =" not in fixed, fixed
    _equal(run_program(fixed), run_program(PICKED))


def test_plain_alias_is_still_fixed_and_equal():
    fixed = fixed_source(PLAIN, ALL, project=True)
    assert "loc = cumh = loc.clone()" in fixed, fixed
    _equal(run_program(fixed), run_program(PLAIN))
