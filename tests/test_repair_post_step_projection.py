"""``repair`` of a projection made in place on a parameter right after its optimizer step
(``w.relu_()``, ``w.div_(w.norm())``), with grad on: "a leaf Variable that requires grad is being
used in an in-place operation". Found at stop 51 (dev case set26/2603, Cooper c39ae85: after the
dual step, ``ExplicitMultiplier.post_step`` runs ``self.weight.relu_()``; the maintainers wrote
``self.weight.data = torch.relu(self.weight.data)``).

The no-grad meaning was refused there because ``relu_`` is a step of a computation and the
leaf's ``.grad`` is read later. But the update ran after a backward filled the leaf's gradient
and an update outside autograd (the optimizer's step) wrote the leaf, with nothing recorded
since that backward reading it: the leaf is state being updated, and a later forward reads the
projected value as the leaf (the gradient it gives is the leaf's). A step of a computation made
before any such step (``w.relu_()`` at the start of a forward, first iteration) is still refused.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.repair import render, repair  # noqa: E402

PROJECTED = '''\
import torch


def project(m):
    m.relu_()


def compute():
    torch.manual_seed(0)
    x = torch.nn.Parameter(torch.randn(4))
    m = torch.nn.Parameter(torch.zeros(1))
    a = 0.5 + torch.rand(4)
    opt_x = torch.optim.SGD([x], lr=0.1)
    opt_m = torch.optim.SGD([m], lr=0.5)
    for _ in range(4):
        opt_x.zero_grad()
        opt_m.zero_grad()
        violation = x.sum() - 1.0
        ((x - a) ** 2).sum().add(m.detach() * violation).sum().backward()
        (-(m * violation.detach())).sum().backward()
        opt_x.step()
        opt_m.step()
        project(m)
    return {"x": x.detach().clone(), "m": m.detach().clone(), "x.grad": x.grad.clone(), "m.grad": m.grad.clone()}
'''
# the maintainers' kind of fix, written by hand
HAND = PROJECTED.replace("    m.relu_()", "    m.data = torch.relu(m.data)")

# look-alike: the same call at the start of each forward, before any step: a step of the
# computation whose gradient the program reads (the no-grad meaning is not shown to be the program's)
FORWARD = '''\
import torch


def compute():
    torch.manual_seed(0)
    w = torch.nn.Parameter(torch.randn(4))
    t = torch.randn(4)
    opt = torch.optim.SGD([w], lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        w.relu_()
        ((w - t) ** 2).sum().backward()
        opt.step()
    return {"w": w.detach().clone(), "w.grad": w.grad.clone()}
'''


def _run(text, tmp_path, name):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    namespace = {}
    exec(compile(text, str(path), "exec"), namespace)
    return namespace["compute"]()


def test_the_program_raises_and_the_hand_fix_runs(tmp_path):
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        _run(PROJECTED, tmp_path, "orig")
    assert (_run(HAND, tmp_path, "hand")["m"] >= 0).all()


def test_a_projection_after_the_step_is_wrapped_in_no_grad(tmp_path):
    path = tmp_path / "projected.py"
    path.write_text(PROJECTED)
    result = repair(f"{path}::compute", devices=["cpu"])
    assert result.verified, render(result)
    assert "torch.no_grad()" in result.repaired
    meaning = result.verification.devices[0].meaning
    assert "no_grad" in meaning and "an update of its state" in meaning, meaning
    got, want = _run(result.repaired, tmp_path, "got"), _run(HAND, tmp_path, "want")
    for key in want:
        assert torch.equal(want[key], got[key]), key


def test_the_same_call_before_any_step_is_not_written(tmp_path):
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        _run(FORWARD, tmp_path, "orig2")
    path = tmp_path / "forward.py"
    path.write_text(FORWARD)
    result = repair(f"{path}::compute", devices=["cpu"])
    assert not result.verified, render(result)
    reasons = " ".join(r for d in result.verification.devices for r in d.reasons)
    assert "step of the computation" in reasons, reasons
