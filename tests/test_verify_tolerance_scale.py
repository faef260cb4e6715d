"""Review of stop 37's runtime (sound38r): the tolerance at a tensor's scale (``close_at_scale``)
lets a small entry change freely beside a large one that carries rounding noise.

``close_at_scale`` bounds ``|x - y|`` by ``rtol`` times the largest magnitude among the entries the
two runs do not agree on bit for bit (review37 left out the entries both wrote the same). Where a
returned tensor stacks a large sum with a small, separately computed value, a rewrite that sums
in another order (noise of about 1e-7 of the sum) and changes the small value by 1% is within
``rtol * scale``: the change was accepted and the rewrite Verified. Fixed by sound39v: every entry
is bounded by its own magnitude and its own measured rounding noise (``close_entrywise``).
Control: the same rewrite without the noise (the sum in the same order) is NOT verified, since the
large entry then agrees bit for bit and the scale is the small entry's own. Real torch, a new program.
"""

from __future__ import annotations

import textwrap

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.verify import Verdict, render_table, verify  # noqa: E402

PROGRAM = textwrap.dedent('''\
    import torch


    def compute():
        torch.manual_seed(0)
        w = torch.rand(4096, requires_grad=True)
        h = w * 1.0
        h.mul_(3.0)
        total = (h * 40.0).sum()
        first = (w[0] * 0.5).detach()
        return {"summary": torch.stack([total, first]), "h": h}
''')

RIGHT = PROGRAM.replace("h = w * 1.0\n    h.mul_(3.0)", "h = w * 3.0")
SMALL_CHANGED = RIGHT.replace("w[0] * 0.5", "w[0] * 0.505")
NOISY_AND_SMALL_CHANGED = SMALL_CHANGED.replace("(h * 40.0).sum()", "(h * 40.0).flip(0).sum()")


def _verify(tmp_path, rewritten: str):
    path = tmp_path / "summary.py"
    path.write_text(PROGRAM)
    return verify(f"{path}::compute", rewritten_source=rewritten, devices=["cpu"], timeout=240)


def test_a_small_entry_changed_beside_a_noisy_large_one_is_not_verified(tmp_path):
    assert NOISY_AND_SMALL_CHANGED != SMALL_CHANGED != RIGHT != PROGRAM
    result = _verify(tmp_path, NOISY_AND_SMALL_CHANGED)
    assert result.devices[0].verdict is Verdict.NOT_VERIFIED, render_table(result)


def test_the_small_change_alone_is_not_verified(tmp_path):
    result = _verify(tmp_path, SMALL_CHANGED)
    assert result.devices[0].verdict is Verdict.NOT_VERIFIED, render_table(result)
