"""An update of a forward's input leaf inside the forward: a step of the computation, not a state set.

A module's ``forward`` (or a forward written as a function) is handed a tensor that is a leaf
requiring grad (an input whose gradient the program reads: saliency, input attribution) and masks
it in place (``x.mul_(mask)``), then computes with it. The maintainers' fix is the out-of-place
form (``x = x * mask``): the gradient the program reads for ``x`` goes through the mask. Under
``torch.no_grad()`` it does not (the masked entries get a gradient), so a ``no_grad`` wrap changes
what the program computes and must never be called verified: the run has to see that the writer
was handed the leaf and computes with it afterwards, which makes the update a step of the
computation (as ``relu_`` is) on a leaf whose ``.grad`` the program reads.

Controls: a leaf handed to an init helper that writes it and returns (nothing computed with it in
that call) is still a state set and gets the no-grad wrap; an ``nn.Parameter`` updated is state.
Real torch; programs written from the pattern (hidden-state / padding / dropout masks on inputs).
"""

from __future__ import annotations

import textwrap

import pytest

torch = pytest.importorskip("torch")

from tests.programs import repair_program  # noqa: E402


MODULE_MASK = '''\
    import torch
    import torch.nn as nn


    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 4)

        def forward(self, x, pad_mask):
            x.mul_(pad_mask.unsqueeze(-1))
            return self.proj(x).relu().sum(1)


    def compute():
        torch.manual_seed(0)
        enc = Encoder()
        x = torch.randn(2, 5, 4).requires_grad_()
        pad = torch.tensor([[1., 1., 1., 0., 0.], [1., 1., 1., 1., 0.]])
        enc(x, pad).pow(2).sum().backward()
        return {"x": x.grad, "w": enc.proj.weight.grad}
'''

FUNCTION_MASK = '''\
    import torch


    def forward(x, w, keep):
        x.mul_(keep)
        return (x @ w).sigmoid()


    def compute():
        torch.manual_seed(0)
        w = torch.randn(5, 2, requires_grad=True)
        x = torch.randn(3, 5, requires_grad=True)
        keep = (torch.rand(3, 5) > 0.4).float()
        loss = forward(x, w, keep).sum()
        loss.backward()
        return {"x": x.grad, "w": w.grad}
'''


def _run(text: str, old: str, new: str) -> dict:
    namespace: dict = {}
    exec(textwrap.dedent(text).replace(old, new), namespace)
    return namespace["compute"]()


@pytest.mark.parametrize("text, line", [(MODULE_MASK, "x.mul_(pad_mask.unsqueeze(-1))"),
                                        (FUNCTION_MASK, "x.mul_(keep)")], ids=["module", "function"])
def test_the_no_grad_wrap_of_a_forward_input_mask_would_change_the_input_gradient(text, line):
    """What makes the wrap wrong, checked with torch by hand: the out-of-place form (the fix)
    and the wrapped update give different gradients for ``x``."""
    out_of_place = _run(text, line, "x = " + line.replace(".mul_(", " * (").replace("x * (", "x * (", 1))
    wrapped = _run(text, line, "with torch.no_grad():\n            " + line if "pad" in line
                   else "with torch.no_grad():\n        " + line)
    assert not torch.allclose(out_of_place["x"], wrapped["x"])


@pytest.mark.parametrize("name, text", [("module_mask", MODULE_MASK), ("function_mask", FUNCTION_MASK)])
def test_a_forward_input_masked_in_place_is_never_verified_under_no_grad(tmp_path, name, text):
    result, shown = repair_program(tmp_path, name, text)
    assert "reference = no-grad meaning" not in shown, shown
    assert not result.verified or "no_grad" not in result.repaired, shown


INIT_HELPER = '''\
    import torch


    def init_rows(w, scale):
        w.mul_(scale)


    def compute():
        torch.manual_seed(0)
        feats = torch.rand(8, 5)
        w = torch.randn(5, 1).requires_grad_()
        init_rows(w, 0.5)
        loss = (feats @ w).pow(2).mean()
        loss.backward()
        return {"w": w.grad}
'''


def test_a_leaf_handed_to_a_helper_that_only_writes_it_is_still_a_state_set(tmp_path):
    """Control: the helper writes its argument and returns; what computes with the leaf runs
    later, outside that call: the no-grad meaning (init), wrapped and verified."""
    result, shown = repair_program(tmp_path, "init_helper", INIT_HELPER)
    assert result.verified, shown
    assert "with torch.no_grad():\n        w.mul_(scale)\n" in result.repaired, shown


@pytest.mark.parametrize("name, text, line", [("module_mask", MODULE_MASK, "x = x.mul(pad_mask.unsqueeze(-1))"),
                                              ("function_mask", FUNCTION_MASK, "x = x.mul(keep)")])
def test_the_out_of_place_form_verifies_against_the_copy_meaning_in_the_writer_s_call(tmp_path, name, text, line):
    """The copy meaning of such an update: the writer's later reads (in that call) see the
    updated copy, the caller's leaf keeps its value; the out-of-place rewrite verifies against
    it and computes the out-of-place fix's gradients (checked with torch)."""
    result, shown = repair_program(tmp_path, name, text)
    assert result.verified, shown
    assert "reference = copy meaning" in shown, shown
    assert line in result.repaired, shown
    namespace: dict = {}
    exec(result.repaired, namespace)
    repaired = namespace["compute"]()
    old = "x.mul_(pad_mask.unsqueeze(-1))" if "pad" in line else "x.mul_(keep)"
    expected = _run(text, old, line.strip())
    assert all(torch.equal(repaired[k], expected[k]) for k in expected)


ACCUMULATE = '''\
    import torch


    def add_term(total, term):
        total += term


    def compute():
        torch.manual_seed(0)
        w = torch.randn(4, requires_grad=True)
        total = torch.zeros((), requires_grad=True)
        for _ in range(3):
            add_term(total, (w * torch.rand(4)).sum())
        total.backward()
        return {"w": w.grad}
'''


def test_a_helper_whose_update_only_its_caller_reads_gets_no_rebinding(tmp_path):
    """Control: the helper updates the leaf it was handed and returns; the caller reads the
    leaf. A rebinding inside the helper would be a no-op (nobody reads it), so the copy meaning
    scoped to the helper's call must not fit: nothing verified with ``total = total + term``."""
    result, shown = repair_program(tmp_path, "accumulate", ACCUMULATE)
    assert not (result.verified and "total = total" in result.repaired), shown
