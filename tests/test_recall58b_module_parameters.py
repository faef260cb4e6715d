"""A module handed to a function as an argument (issue 24, stop 58: bench/realworld set4 424, SAiD's
``elbo_loss(said_vae, data, std, device)``: ``output = said_vae(blendshape_coeffs)``, then
``answer_reweight /= std`` writes into the encoder's saved input).

``handed_in.called_values``: a function's parameter holds what every call of the function passes,
where that set is closed (a module-level function called only by its name in this file, never
handed on, no other file of the run importing or calling it, the parameter never rebound). The
call of such a parameter then runs that module's ``forward`` (``summaries.CallTargets.callee``),
and its parameters require grad unless the file may switch them off (``views``).

Programs written from scratch; torch runs each. Look-alikes (the model frozen, grad off, the
function handed on, a module that saves nothing passed) run or stay unproven.
"""

from __future__ import annotations

from codemod.config import Settings
from codemod.engine.pipeline import process_source
from tests.programs import fixed_source, marked, proven_lines, raises_inplace, run_program

PROGRAM = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return torch.tanh(self.fc(x))


def loss_fn(net, data):
    x = data * 1.0
    out = net(x)
    x /= 2  # MARK
    return out.sum()


def main():
    net = Net()
    loss = loss_fn(net, torch.randn(3, 4))
    loss.backward()
    return [p.grad for p in net.parameters()]
"""
OUT_OF_PLACE = PROGRAM.replace("    x /= 2  # MARK\n", "    x = x / 2\n")

HANDED_ON = PROGRAM.replace("    loss = loss_fn(net, torch.randn(3, 4))\n",
                            "    step = loss_fn\n    loss = step(net, torch.randn(3, 4))\n")

LOOK_ALIKES = {
    # the model's parameters frozen and the input needs no grad: autograd records nothing
    "frozen": PROGRAM.replace("    net = Net()\n", "    net = Net()\n    net.requires_grad_(False)\n")
                     .replace("    loss.backward()\n", "    assert not loss.requires_grad\n"),
    # the step runs with grad off
    "grad_off": PROGRAM.replace("    loss = loss_fn(net, torch.randn(3, 4))\n    loss.backward()\n",
                                "    with torch.no_grad():\n        loss = loss_fn(net, torch.randn(3, 4))\n"),
    # a module that saves nothing of its input
    "identity": PROGRAM.replace("    net = Net()\n", "    net = nn.Identity()\n")
                       .replace("torch.randn(3, 4))", "torch.randn(3, 4, requires_grad=True))")
                       .replace("    return [p.grad for p in net.parameters()]\n", "    return loss\n"),
}


def _line() -> int:
    (line,) = marked(PROGRAM)
    return line


def test_the_write_raises_and_the_out_of_place_form_runs():
    assert raises_inplace(PROGRAM)
    assert all(g is not None for g in run_program(OUT_OF_PLACE))


def test_the_write_is_proven_through_the_module_handed_in():
    assert _line() in proven_lines(PROGRAM)


def test_the_safe_fix_rebinds_the_local_and_the_program_runs():
    fixed = fixed_source(PROGRAM, project=True)
    assert "x = x / 2" in fixed
    assert all(g is not None for g in run_program(fixed))


def test_look_alikes_run_and_stay_unproven():
    for name, source in LOOK_ALIKES.items():
        assert source != PROGRAM, name
        run_program(source)
        assert _line() not in proven_lines(source), name


def test_a_function_handed_on_is_not_followed():
    """``step = loss_fn``: a call the analysis does not see may pass anything (unknown is not yes),
    though this one raises."""
    assert raises_inplace(HANDED_ON)
    assert _line() not in proven_lines(HANDED_ON)


def test_two_calls_passing_different_modules_are_not_one_target():
    source = PROGRAM.replace("    loss.backward()\n",
                             "    loss.backward()\n    loss_fn(nn.Identity(), torch.randn(3, 4))\n")
    assert raises_inplace(source)
    assert _line() not in proven_lines(source)


def test_the_parameter_of_a_file_checked_alone_is_followed_too():
    result = process_source(PROGRAM.encode(), "case.py", Settings())
    assert result.error is None, result.error
    assert _line() in {f.span.line for f in result.findings if f.code.startswith("IPF1")}
