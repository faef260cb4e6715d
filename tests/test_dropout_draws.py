"""Out-of-place dropout drawing as the in-place one does, off the CPU (codemod/runtime/dropout_draws.py).

On CUDA `torch.dropout` draws its mask in a fused kernel and `torch.dropout_` composes `bernoulli_`: from one
seed they keep different entries, so `nn.Dropout(inplace=True)` -> `inplace=False` (a right fix) could never
be verified there (stop 49, on an H200). Off the CPU the verify harness reroutes the out-of-place dropout to
the in-place one's composition. On the CPU the composition is what both already compute: the tests here show
the rerouted formula draws and differentiates exactly as `torch.dropout_` does (a wrong scale, mask
layout or draw order fails them), and that CPU tensors are left alone; the CUDA-marked ones show the
verdicts on a GPU.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

from codemod.runtime.dropout_draws import SameDropoutDraws, composed_dropout  # noqa: E402
from codemod.runtime.verify import Verdict, render_table, verify  # noqa: E402


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_the_composition_draws_and_differentiates_as_the_in_place_dropout(p, layout):
    base = torch.randn(6, 7, dtype=torch.float64)
    x = base.t() if layout == "transposed" else base
    torch.manual_seed(3)
    a = x.clone().requires_grad_()
    out_a = composed_dropout(a, p)
    torch.manual_seed(3)
    b = x.clone().requires_grad_()
    out_b = torch.dropout_(b.clone(), p, True)
    assert torch.equal(out_a, out_b)
    cot = torch.randn_like(out_a)
    out_a.backward(cot)
    out_b.backward(cot)
    assert torch.equal(a.grad, b.grad)
    kept = out_a != 0
    assert torch.allclose(out_a[kept], x[kept] / (1 - p))


def test_cpu_tensors_and_other_calls_are_left_alone():
    x = torch.randn(50, 40)
    with SameDropoutDraws():
        torch.manual_seed(0)
        seen = F.dropout(x, 0.5, training=True)
        same_eval = F.dropout(x, 0.5, training=False)
        whole = torch.dropout(x, 0.0, True)
    torch.manual_seed(0)
    assert torch.equal(seen, F.dropout(x, 0.5, training=True))
    assert torch.equal(same_eval, x) and torch.equal(whole, x)


DROPOUT_AFTER_RELU = '''import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(16, 32)
        self.act = nn.ReLU()
        self.drop = nn.Dropout(0.3, inplace=True)
        self.out = nn.Linear(32, 4)

    def forward(self, x):
        return self.out(self.drop(self.act(self.lin(x))))


def example_inputs():
    return torch.randn(8, 16)
'''


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_on_cuda_the_out_of_place_dropout_draws_as_the_in_place_one():
    x = torch.randn(64, 64, device="cuda")
    with SameDropoutDraws():
        torch.manual_seed(1)
        out = F.dropout(x, 0.4, training=True)
    torch.manual_seed(1)
    assert torch.equal(out, F.dropout(x.clone(), 0.4, training=True, inplace=True))


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_the_inplace_dropout_fix_verifies_on_cuda_too(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(DROPOUT_AFTER_RELU)
    result = verify(f"{path}::Block", rewritten_source=DROPOUT_AFTER_RELU.replace("inplace=True", "inplace=False"),
                    devices=["cpu", "cuda"])
    assert [d.verdict for d in result.devices] == [Verdict.VERIFIED, Verdict.VERIFIED], render_table(result)
    wrong = DROPOUT_AFTER_RELU.replace("nn.Dropout(0.3, inplace=True)", "nn.Dropout(0.2)")
    result = verify(f"{path}::Block", rewritten_source=wrong, devices=["cpu", "cuda"])
    assert result.devices[1].verdict is not Verdict.VERIFIED, render_table(result)
