"""A "Verified." never rests on gradients that are None on both sides alone (issue 23, "a verdict
names its evidence").

A gradient that is None in the reference and in the rewrite says that no backward reached that
leaf, either way. Where every compared gradient is such a pair and the run changed no state, the
verdict compared outputs only: a rewrite that detached everything would agree as well. It is
``unproven``, saying that no gradient reached any leaf on either side.

Controls: where one compared gradient is real (the others None), a right rewrite still verifies
and a wrong one is still NOT verified. Real torch, new programs (a feature whose output is
detached before it is returned, as in a logging or a metric head).
"""

from __future__ import annotations

import textwrap

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.verify import Verdict, render_table, verify  # noqa: E402

from tests.programs import repair_program  # noqa: E402

# Every output is detached: the harness's backward reaches no leaf on either side.
DETACHED = '''\
    import torch


    def compute():
        torch.manual_seed(0)
        weights = torch.rand(6, requires_grad=True)
        feats = torch.tanh(weights * 2.0) + 1.0
        score = (feats * 3.0).detach()
        return {"score": score, "mean": score.mean()}
'''

# The same feature detached by the rewrite as well: nothing a gradient reaches changed.
DETACHED_REWRITE = DETACHED.replace("torch.tanh(weights * 2.0)", "torch.tanh(weights.detach() * 2.0)")

# One output carries a gradient to ``scale``; ``weights`` gets none on either side.
ONE_REAL = '''\
    import torch


    def compute():
        torch.manual_seed(0)
        weights = torch.rand(6, requires_grad=True)
        scale = torch.rand(6, requires_grad=True)
        feats = (torch.tanh(weights * 2.0) + 1.0).detach()
        return {"scaled": feats * scale}
'''

# The leaf family: a leaf updated in place, the program's output detached, nothing differentiated.
LEAF_DETACHED = '''\
    import torch


    def compute():
        torch.manual_seed(0)
        weights = torch.rand(6, requires_grad=True)
        weights.mul_(0.5)
        score = (weights * 3.0).detach()
        return {"score": score}
'''


def _verify(tmp_path, original: str, rewritten: str):
    path = tmp_path / "feature.py"
    path.write_text(textwrap.dedent(original))
    return verify(f"{path}::compute", rewritten_source=textwrap.dedent(rewritten), devices=["cpu"], timeout=240)


def test_gradients_none_on_both_sides_alone_are_no_evidence(tmp_path):
    assert DETACHED_REWRITE != DETACHED
    result = _verify(tmp_path, DETACHED, DETACHED_REWRITE)
    report = result.devices[0]
    shown = render_table(result)
    assert report.compared.grads > 0 and report.compared.grads == report.compared.grads_none, shown
    assert report.compared.changed == 0, shown
    assert report.verdict is Verdict.UNPROVEN, shown
    assert "no gradient reached any leaf on either side" in shown, shown


def test_one_real_gradient_among_none_ones_still_verifies(tmp_path):
    result = _verify(tmp_path, ONE_REAL, ONE_REAL.replace("feats * scale", "scale * feats"))
    report = result.devices[0]
    shown = render_table(result)
    assert 0 < report.compared.grads_none < report.compared.grads, shown
    assert report.verdict is Verdict.VERIFIED, shown


def test_a_wrong_rewrite_of_the_real_gradient_is_not_verified(tmp_path):
    result = _verify(tmp_path, ONE_REAL, ONE_REAL.replace("feats * scale", "feats * scale.detach() + scale * 0"))
    assert result.devices[0].verdict is Verdict.NOT_VERIFIED, render_table(result)


def test_a_leaf_repair_whose_run_differentiates_nothing_is_not_written_as_verified(tmp_path):
    result, shown = repair_program(tmp_path, "leaf_detached", LEAF_DETACHED)
    assert not result.verified, shown
    assert "no gradient reached any leaf on either side" in shown, shown


# The program takes its gradient itself (``torch.autograd.grad``) and returns it: no leaf gets a
# ``.grad`` and the output needs none, yet a backward reached ``x`` and the output is that gradient.
OWN_GRAD = '''\
    import torch


    def compute():
        torch.manual_seed(0)
        x = torch.rand(5, requires_grad=True)
        energy = (torch.sigmoid(x * 3.0) ** 2).sum()
        force = torch.autograd.grad(energy, [x])[0]
        return {"force": force}
'''


def test_a_gradient_the_program_took_itself_and_returned_is_evidence(tmp_path):
    result = _verify(tmp_path, OWN_GRAD, OWN_GRAD.replace("torch.sigmoid(x * 3.0)", "(x * 3.0).sigmoid()"))
    report = result.devices[0]
    shown = render_table(result)
    assert report.compared.grads == report.compared.grads_none, shown  # the harness's are all none
    assert report.compared.own_grads == len(report.compared.calls) > 0, shown  # one per call
    assert report.verdict is Verdict.VERIFIED, shown


def test_a_wrong_rewrite_of_that_gradient_is_not_verified(tmp_path):
    result = _verify(tmp_path, OWN_GRAD, OWN_GRAD.replace("energy, [x])[0]", "energy * 2.0, [x])[0]"))
    assert result.devices[0].verdict is Verdict.NOT_VERIFIED, render_table(result)
