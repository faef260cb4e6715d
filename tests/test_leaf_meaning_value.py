"""A value that requires grad written into a plain leaf is the program's differentiable sum.

The shape of a training library's callbacks (torchbearer's `add_to_loss`): the loss starts as a
leaf, `torch.zeros(1, requires_grad=True)`, when no criterion is given, and each callback adds its
term in place in a helper module, `state["loss"] += term(state)`; the loss then goes backward.
PyTorch refuses the leaf write. A `no_grad` wrap makes the program run, and verifies against the
no-grad meaning, but the model then gets no gradient at all: the terms were the point (issue 23's
meaning rule: no-grad only where nothing differentiated afterwards depends on the update
carrying a gradient). Real torch; the repair must not write that wrap.
"""

from __future__ import annotations

import textwrap

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.repair import repair  # noqa: E402

CALLBACKS = textwrap.dedent('''\
    def add_to_loss(term):
        def callback(state):
            state["loss"] += term(state)
        return callback


    def train_step(model, optimizer, x, callbacks):
        state = {"x": x, "model": model}
        state["out"] = model(x)
        state["loss"] = __import__("torch").zeros(1, requires_grad=True)
        for callback in callbacks:
            callback(state)
        optimizer.zero_grad()
        state["loss"].backward()
        optimizer.step()
        return state["loss"]
''')

PROGRAM = textwrap.dedent('''\
    import torch
    import torch.nn as nn

    from trainer_callbacks import add_to_loss, train_step


    def compute():
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 4))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        recon = add_to_loss(lambda s: ((s["out"] - s["x"]) ** 2).mean())
        small = add_to_loss(lambda s: 1e-3 * s["out"].pow(2).sum())
        x = torch.randn(8, 4)
        train_step(model, optimizer, x, [recon, small])
        return {"w0": model[0].weight.detach().clone(), "w2": model[2].weight.detach().clone()}
''')


def test_a_leaf_loss_summed_from_terms_that_require_grad_gets_no_no_grad_wrap(tmp_path):
    (tmp_path / "trainer_callbacks.py").write_text(CALLBACKS)
    path = tmp_path / "vae.py"
    path.write_text(PROGRAM)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        import runpy
        import sys
        sys.path.insert(0, str(tmp_path))
        try:
            runpy.run_path(str(path))["compute"]()
        finally:
            sys.path.remove(str(tmp_path))
            sys.modules.pop("trainer_callbacks", None)
    result = repair(f"{path}::compute", timeout=240)
    written = result.repaired + "".join(getattr(o, "repaired", "") for o in (result.others or []))
    assert "no_grad" not in written, written
    if result.verified:  # a copy meaning that verified: the weights moved as the terms say
        assert "+=" not in written.split("def callback")[1].split("return")[0] if "def callback" in written else True
