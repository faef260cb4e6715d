"""The oracle and tensors a custom autograd.Function keeps outside save_for_backward (stop 58,
holdout23/3506: sinabs' ThresholdSubtract keeps `ctx.threshold = threshold`, which the layer then
updates in place). Autograd never version-checks a ctx attribute, so backward silently reads the
mutated value; an oracle that snapshots saved tensors only reproduced that stale read, and a repair
keeping it (a clone at the save site) was printed "Verified." against it. The oracle now gives
backward the attribute as the forward left it (runtime.ctx_attributes)."""

from __future__ import annotations

import importlib.util
import textwrap

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.ctx_attributes import snapshot_ctx_attributes  # noqa: E402
from codemod.runtime.references import SavedTensors  # noqa: E402
from codemod.runtime.repair import repair  # noqa: E402

PROGRAM = """
import torch


class Div(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, th):
        KEEP
        return x / th

    @staticmethod
    def backward(ctx, g):
        READ
        return g / th, None


def compute():
    torch.manual_seed(0)
    w = torch.randn(4, requires_grad=True)
    x = torch.rand(4) + 1
    th = torch.ones(4) + w.sigmoid()
    total = 0
    for step in range(3):
        out = Div.apply(x * w, th)
        total = total + out.sum() + (th * out).sum()
        th WRITE
    total.backward()
    return {"loss": total.detach(), "w.grad": w.grad.clone()}
"""

ATTRIBUTE = ("ctx.th = th", "th = ctx.th")
SAVED = ("ctx.save_for_backward(th)", "(th,) = ctx.saved_tensors")


def program(keep=ATTRIBUTE, write="*= 0.5"):
    text = PROGRAM.replace("KEEP", keep[0]).replace("READ", keep[1]).replace("WRITE", write)
    return textwrap.dedent(text).lstrip()


def load(tmp_path, text, name):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return path, module


def maintainers(tmp_path):
    """The out-of-place program (the maintainers' fix): every step's threshold its own tensor."""
    return load(tmp_path, program(write="= th * 0.5"), "ref")[1].compute()


def test_the_oracle_gives_backward_the_ctx_attribute_as_the_forward_left_it(tmp_path):
    _, original = load(tmp_path, program(), "orig")
    with SavedTensors(snapshot=True).hooks():
        oracle = original.compute()
    ref = maintainers(tmp_path)
    assert torch.equal(oracle["loss"], ref["loss"])
    assert torch.allclose(oracle["w.grad"], ref["w.grad"])


def test_an_attribute_left_unwritten_keeps_its_identity(tmp_path):
    """Only a written attribute is swapped for its copy: a backward that reaches the object
    itself (``ctx.weight.grad = ...``) still reaches it when nothing wrote it."""
    seen = []

    class Keep(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, t):
            ctx.t = t
            return x * 2

        @staticmethod
        def backward(ctx, g):
            seen.append(ctx.t)
            return g * 2, None

    t = torch.ones(3)
    x = torch.ones(3, requires_grad=True)
    with snapshot_ctx_attributes():
        Keep.apply(x, t).sum().backward()
    assert seen[0] is t


def test_repair_does_not_verify_the_stale_ctx_read(tmp_path):
    """Before: the clone at the save site (`th.clone() * out`) kept backward's stale read of
    ctx.th and was "Verified." against the oracle's same stale read. Now it does not verify, and
    what is verified and written computes the maintainers' gradients."""
    path = tmp_path / "model.py"
    path.write_text(program())
    result = repair(f"{path}::compute", devices=["cpu"])
    tried = [(a.verification is not None and a.verification.verified, a) for a in result.attempts]
    assert result.verified, result
    assert "th.clone()" not in result.repaired
    ref = maintainers(tmp_path)
    _, repaired = load(tmp_path, result.repaired, "repaired")
    assert torch.allclose(repaired.compute()["w.grad"], ref["w.grad"])
    assert tried


@pytest.mark.parametrize("keep, write", [(SAVED, "*= 0.5"), (ATTRIBUTE, "= th * 0.5")])
def test_controls_saved_or_never_written_still_verify(tmp_path, keep, write):
    """Controls: the threshold in save_for_backward (autograd checks it: the snapshot oracle always
    covered it), or a ctx attribute never written: the oracle's meaning is unchanged."""
    text = program(keep, write)
    _, module = load(tmp_path, text, "ctl")
    with SavedTensors(snapshot=True).hooks():
        oracle = module.compute()
    ref = maintainers(tmp_path)
    assert torch.allclose(oracle["w.grad"], ref["w.grad"])
    if write == "*= 0.5":
        path = tmp_path / "model.py"
        path.write_text(text)
        result = repair(f"{path}::compute", devices=["cpu"])
        assert result.verified
        _, repaired = load(tmp_path, result.repaired, "repaired_ctl")
        assert torch.allclose(repaired.compute()["w.grad"], ref["w.grad"])


def test_a_tensor_held_inside_an_object_on_the_ctx_and_written_is_refused_not_compared():
    """`ctx.layer = layer` and backward reads `ctx.layer.weight`, written in place after the
    forward: the oracle cannot put the forward's value back without changing the program's own
    module, so its backward fails (nothing is verified against the stale read); unwritten, it runs."""
    from codemod.runtime.ctx_attributes import CtxAttributeWritten

    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, layer):
            ctx.layer = layer
            return x * layer.weight.detach()

        @staticmethod
        def backward(ctx, g):
            return g * ctx.layer.weight.detach(), None

    for written in (False, True):
        layer = torch.nn.Linear(3, 3, bias=False)
        x = torch.ones(3, requires_grad=True)
        with snapshot_ctx_attributes():
            y = Scale.apply(x, layer)
            if written:
                with torch.no_grad():
                    layer.weight.mul_(2)
                with pytest.raises(CtxAttributeWritten, match="ctx.layer.weight"):
                    y.sum().backward()
            else:
                y.sum().backward()
                assert x.grad is not None


HELD = """
import torch


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, layer):
        ctx.layer = layer
        return x * layer.weight.detach().sum(0)

    @staticmethod
    def backward(ctx, g):
        return g * ctx.layer.weight.detach().sum(0), None


def compute():
    torch.manual_seed(0)
    layer = torch.nn.Linear(3, 3, bias=False)
    x = torch.ones(3, requires_grad=True)
    y = Scale.apply(x, layer)
    z = torch.sigmoid(y)
    with torch.no_grad():
        layer.weight.mul_(2)
    z += 1
    z.sum().backward()
    return {"x.grad": x.grad.clone()}
"""


def test_repair_is_not_verified_where_backward_reads_a_written_tensor_it_cannot_snapshot(tmp_path):
    """Before: "Verified." (both sides read the weight as written after the forward). Now the
    oracle refuses: no reference, exit 1, the verdict says what could not be compared."""
    from typer.testing import CliRunner

    from codemod.frontends.cli import app

    path = tmp_path / "held.py"
    path.write_text(textwrap.dedent(HELD).lstrip())
    out = CliRunner().invoke(app, ["repair", f"{path}::compute", "--device", "cpu"])
    assert out.exit_code == 1, out.stdout
    assert "Verified." not in out.stdout and "ctx.layer.weight" in out.stdout
