"""A None-vs-None gradient pair counts as evidence where the program itself switched that leaf out
of autograd (stop 38, issue 23's follow-up to sound37's rule).

What such a pair proves, and only that: the rewrite kept the leaf frozen as the program did. It
proves nothing about how a gradient is computed, but the program, by freezing the leaf, has no
gradient there to compute; its values are compared as outputs or state. So the pair counts only
where every None pair of the comparison is such a leaf (no trainable leaf is left that the
harness's backward did not reach: a detached head stays unproven, sound37's rule), and a leaf
frozen on one side only is a difference.

Programs (new): a table a helper fills in place and then freezes (``requires_grad_(False)``,
``requires_grad = False``); the right repair (the writes under ``torch.no_grad()``) is Verified,
a repair that drops the freezing or writes other values is NOT verified, and a frozen table
beside a trainable weight whose output is detached stays unproven. Real torch.
"""

from __future__ import annotations

import textwrap

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.verify import Verdict, render_table, verify  # noqa: E402

FROZEN = '''\
    import torch


    def fill(table):
        steps = torch.arange(table.shape[0]).unsqueeze(1).float()
        table[:, 0] = torch.sin(steps[:, 0] / 7.0)
        table[:, 1] = torch.cos(steps[:, 0] / 7.0)
        FREEZE


    def compute():
        torch.manual_seed(0)
        table = torch.zeros(6, 2, requires_grad=True)
        fill(table)
        ids = torch.tensor([0, 3, 5])
        return {"rows": table[ids] * 2.0, "table": table}
'''

WRITES = ("    table[:, 0] = torch.sin(steps[:, 0] / 7.0)\n    table[:, 1] = torch.cos(steps[:, 0] / 7.0)\n")
UNDER_NO_GRAD = ("    with torch.no_grad():\n        table[:, 0] = torch.sin(steps[:, 0] / 7.0)\n"
                 "        table[:, 1] = torch.cos(steps[:, 0] / 7.0)\n")
FREEZES = {"requires_grad_": "table.requires_grad_(False)", "attribute": "table.requires_grad = False"}

# A frozen table beside a trainable weight whose head is detached: the weight's gradient is None
# on both sides because of the detach, not because the program froze it.
BESIDE_DETACHED = FROZEN.replace(
    '        return {"rows": table[ids] * 2.0, "table": table}',
    '        weight = torch.rand(2, requires_grad=True)\n'
    '        return {"rows": table[ids] * 2.0, "table": table, "head": (table[ids] * weight).detach()}')


def _program(source: str, freeze: str) -> str:
    return textwrap.dedent(source).replace("FREEZE", freeze)


def _verify(tmp_path, original: str, rewritten: str):
    path = tmp_path / "table.py"
    path.write_text(original)
    return verify(f"{path}::compute", rewritten_source=rewritten, devices=["cpu"], timeout=240)


@pytest.mark.parametrize("how", sorted(FREEZES))
def test_a_leaf_the_program_froze_is_evidence_that_the_repair_kept_it_frozen(tmp_path, how):
    original = _program(FROZEN, FREEZES[how])
    right = original.replace(WRITES, UNDER_NO_GRAD)
    assert right != original
    result = _verify(tmp_path, original, right)
    report, shown = result.devices[0], render_table(result)
    assert report.reference == "no-grad meaning", shown
    assert report.compared.grads == report.compared.grads_none == report.compared.grads_frozen > 0, shown
    assert report.verdict is Verdict.VERIFIED, shown


@pytest.mark.parametrize("how", sorted(FREEZES))
def test_a_repair_that_drops_the_freezing_is_not_verified(tmp_path, how):
    original = _program(FROZEN, FREEZES[how])
    wrong = original.replace(WRITES, UNDER_NO_GRAD).replace(FREEZES[how], "pass")
    result = _verify(tmp_path, original, wrong)
    assert result.devices[0].verdict is Verdict.NOT_VERIFIED, render_table(result)


def test_a_repair_that_writes_other_values_is_not_verified(tmp_path):
    original = _program(FROZEN, FREEZES["requires_grad_"])
    wrong = original.replace(WRITES, UNDER_NO_GRAD).replace("/ 7.0)\n", "/ 7.5)\n")
    result = _verify(tmp_path, original, wrong)
    assert result.devices[0].verdict is Verdict.NOT_VERIFIED, render_table(result)


def test_a_frozen_leaf_beside_a_detached_trainable_one_is_no_evidence(tmp_path):
    original = _program(BESIDE_DETACHED, FREEZES["requires_grad_"])
    right = original.replace(WRITES, UNDER_NO_GRAD)
    result = _verify(tmp_path, original, right)
    report, shown = result.devices[0], render_table(result)
    assert 0 < report.compared.grads_frozen < report.compared.grads_none, shown
    assert report.verdict is Verdict.UNPROVEN, shown
    assert "no gradient reached any leaf on either side" in shown, shown


# The program freezes the leaf after an output was computed from it: the output still requires
# grad (a caller could differentiate it), though no gradient reaches the frozen leaf. A rewrite
# that detaches the leaf first returns the same values and the same None pair, but an output a
# caller can no longer differentiate: the frozen pair is no evidence there (``flags_differ``). The
# run changed the leaf in place, and that state counts as evidence on its own (before stop 38
# too): the verdict is still Verified, a strict xfail. Comparing every output's requires_grad
# would close it, but fails right rewrites of the saved-tensor family (``e.zero_()`` ->
# ``e = torch.zeros_like(e)``: the gradient through ``e`` is zero either way).
FROZEN_AFTER_USE = '''\
    import torch


    def compute():
        torch.manual_seed(0)
        table = torch.rand(6, 2, requires_grad=True)
        table[0].mul_(2.0)
        rows = table * 3.0
        table.requires_grad_(False)
        return {"rows": rows}
'''


@pytest.mark.xfail(strict=True, reason="an output's requires_grad is not compared: the leaf's value the run changed "
                   "(state, evidence since before stop 38) verifies the rewrite that detached the output")
def test_a_frozen_pair_beside_an_output_that_requires_grad_on_one_side_only_is_no_evidence(tmp_path):
    original = textwrap.dedent(FROZEN_AFTER_USE)
    detached = original.replace("    table[0].mul_(2.0)\n    rows = table * 3.0\n",
                                "    with torch.no_grad():\n        table[0].mul_(2.0)\n    rows = table.detach() * 3.0\n")
    assert detached != original
    result = _verify(tmp_path, original, detached)
    assert result.devices[0].verdict is not Verdict.VERIFIED, render_table(result)


# The same without the in-place write (the original runs and is the reference): nothing but the
# frozen pair could count, and the output requires grad on one side only.
FROZEN_AFTER_USE_PLAIN = FROZEN_AFTER_USE.replace("        table[0].mul_(2.0)\n", "")


def test_a_frozen_pair_does_not_count_where_an_output_requires_grad_on_one_side_only(tmp_path):
    original = textwrap.dedent(FROZEN_AFTER_USE_PLAIN)
    detached = original.replace("rows = table * 3.0", "rows = table.detach() * 3.0")
    assert detached != original
    result = _verify(tmp_path, original, detached)
    report, shown = result.devices[0], render_table(result)
    assert report.compared.grads_frozen == report.compared.grads_none > 0, shown
    assert report.compared.flags_differ > 0, shown
    assert report.verdict is Verdict.UNPROVEN, shown
