"""The verdict's tolerance is each entry's own (sound39v): an entry may differ only by what
rounding explains *at that entry*, never by a fraction of a large noisy neighbour.

Each rewrite below is a new program that reorders a large sum (rounding noise of ~1e-7 of the
sum) and changes one small, separately computed value by 1%: in a returned tensor, in a tensor
inside a returned dict, in a gradient. None may be Verified. The controls are right rewrites
whose rounding is far above some entries' own magnitude, which the rounding probe (the
reference run again rounded upward) must measure and accept: a sum in another order inside Adam
steps (noise everywhere, weights near zero), and a cancellation ``(big + s) - big`` whose result
is all rounding of ``big``. Real torch, ``verify`` end to end, then ``close_entrywise`` alone.
"""

from __future__ import annotations

import textwrap

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.compare import NOISE_FACTOR, close_entrywise, entry_noise  # noqa: E402
from codemod.runtime.rounding import probe_available, rounding  # noqa: E402
from codemod.runtime.verify import Verdict, render_table, verify  # noqa: E402


def _verify(tmp_path, original: str, rewritten: str):
    path = tmp_path / "program.py"
    path.write_text(original)
    result = verify(f"{path}::compute", rewritten_source=rewritten, devices=["cpu"], timeout=240)
    return result.devices[0], render_table(result)


# --- a small entry changed beside noisy large ones -------------------------------------------

DICT_PROGRAM = textwrap.dedent('''\
    import torch


    def compute():
        torch.manual_seed(3)
        weights = torch.rand(3000, requires_grad=True)
        scaled = weights * 1.0
        scaled.add_(2.0)
        energy = (scaled * 2500.0).sum()
        offset = (weights[7] * 0.25).detach()
        return {"report": torch.stack([energy, energy * 0.5, offset]), "scaled": scaled}
''')
DICT_RIGHT = DICT_PROGRAM.replace("scaled = weights * 1.0\n    scaled.add_(2.0)", "scaled = weights + 2.0")
DICT_NOISY = DICT_RIGHT.replace("(scaled * 2500.0).sum()", "(scaled * 2500.0).flip(0).sum()")
DICT_NOISY_AND_CHANGED = DICT_NOISY.replace("weights[7] * 0.25", "weights[7] * 0.2525")

GRAD_PROGRAM = textwrap.dedent('''\
    import torch


    def compute():
        torch.manual_seed(5)
        pair = torch.rand(2, requires_grad=True)
        data = torch.rand(5000) * 80.0
        spread = pair[0] * data
        spread.mul_(1.0)
        return spread.sum() + pair[1] * 0.5
''')
GRAD_RIGHT = GRAD_PROGRAM.replace("    spread.mul_(1.0)\n", "")
GRAD_NOISY = GRAD_RIGHT.replace("pair[0] * data", "pair[0] * data.flip(0)")
GRAD_NOISY_AND_CHANGED = GRAD_NOISY.replace("pair[1] * 0.5", "pair[1] * 0.505")


def test_a_small_entry_of_a_tensor_in_a_dict_changed_beside_noisy_sums_is_not_verified(tmp_path):
    assert DICT_NOISY_AND_CHANGED != DICT_NOISY != DICT_RIGHT != DICT_PROGRAM
    report, table = _verify(tmp_path, DICT_PROGRAM, DICT_NOISY_AND_CHANGED)
    assert report.verdict is Verdict.NOT_VERIFIED, table
    assert any("[report]" in d.where and "beyond its own bound at entry 2" in d.what for d in report.differences), table


def test_the_same_reordered_sum_without_the_change_is_verified(tmp_path):
    report, table = _verify(tmp_path, DICT_PROGRAM, DICT_NOISY)
    assert report.verdict is Verdict.VERIFIED, table


def test_a_small_gradient_entry_changed_beside_a_noisy_one_is_not_verified(tmp_path):
    """The output moves by 0.005 of ~2e5 (rounding at its scale); the gradient of ``pair[1]``
    moves from 0.5 to 0.505 beside ``pair[0]``'s, a reordered sum of 5000 terms."""
    assert GRAD_NOISY_AND_CHANGED != GRAD_NOISY != GRAD_RIGHT != GRAD_PROGRAM
    report, table = _verify(tmp_path, GRAD_PROGRAM, GRAD_NOISY_AND_CHANGED)
    assert report.verdict is Verdict.NOT_VERIFIED, table
    assert report.differences and all("output" not in d.where for d in report.differences), table


def test_the_gradient_of_the_reordered_sum_alone_is_verified(tmp_path):
    report, table = _verify(tmp_path, GRAD_PROGRAM, GRAD_NOISY)
    assert report.verdict is Verdict.VERIFIED, table


# --- controls: rounding far above an entry's own magnitude, measured and accepted ------------

ADAM_PROGRAM = textwrap.dedent('''\
    import torch


    def compute():
        torch.manual_seed(11)
        layer = torch.nn.Linear(48, 32)
        batch = torch.randn(512, 48) * 30.0
        target = torch.randn(512, 32)
        opt = torch.optim.Adam(layer.parameters(), lr=0.05)
        for _ in range(12):
            opt.zero_grad()
            hidden = layer(batch)
            hidden.mul_(1.0)
            ((hidden - target) ** 2).mean().backward()
            opt.step()
        return layer.weight.detach().clone()
''')
ADAM_REORDERED = ADAM_PROGRAM.replace(
    "hidden = layer(batch)\n        hidden.mul_(1.0)\n        ((hidden - target) ** 2).mean().backward()",
    "hidden = layer(batch.flip(0))\n        ((hidden - target.flip(0)) ** 2).mean().backward()")

CANCEL_PROGRAM = textwrap.dedent('''\
    import torch


    def compute():
        torch.manual_seed(2)
        gain = torch.rand(16, requires_grad=True) + 0.5
        readings = torch.randn(4000, 16) * 0.1 + 1000.0
        scaled = readings * 1.0
        scaled.mul_(gain)
        return (scaled * scaled).mean(0) - scaled.mean(0) ** 2  # a variance: E[x^2] - E[x]^2
''')
CANCEL_REORDERED = CANCEL_PROGRAM.replace(
    "scaled = readings * 1.0\n    scaled.mul_(gain)", "scaled = readings.flip(0) * gain")

@pytest.mark.skipif(not probe_available(), reason="this machine cannot set the rounding mode")
def test_a_sum_in_another_order_inside_adam_steps_is_verified_by_its_measured_noise(tmp_path):
    assert ADAM_REORDERED != ADAM_PROGRAM
    report, table = _verify(tmp_path, ADAM_PROGRAM, ADAM_REORDERED)
    assert report.verdict is Verdict.VERIFIED, table
    assert report.rounding.startswith("measured"), table  # the entries' own bounds were not enough


@pytest.mark.skipif(not probe_available(), reason="this machine cannot set the rounding mode")
def test_a_cancellation_near_zero_is_verified_when_only_rounding_differs(tmp_path):
    assert CANCEL_REORDERED != CANCEL_PROGRAM
    report, table = _verify(tmp_path, CANCEL_PROGRAM, CANCEL_REORDERED)
    assert report.verdict is Verdict.VERIFIED, table
    assert report.rounding.startswith("measured"), table  # the entries' own bounds were not enough


# --- the bound itself -------------------------------------------------------------------------

def test_each_entry_is_bounded_by_its_own_magnitude_without_noise():
    x = torch.tensor([250000.0, 0.25], dtype=torch.float64)
    assert close_entrywise(x, x + torch.tensor([0.02, 0.0], dtype=torch.float64), 1e-5, 1e-6)
    assert not close_entrywise(x, x + torch.tensor([0.0, 0.0025], dtype=torch.float64), 1e-5, 1e-6)


def test_an_entry_gets_its_tolerance_from_its_own_noise_not_a_neighbours():
    x = torch.tensor([250000.0, 0.25, 0.25], dtype=torch.float64)
    noise = torch.tensor([0.03, 0.0, 0.001], dtype=torch.float64)
    moved_third = x + torch.tensor([0.0, 0.0, 0.001 * NOISE_FACTOR * 0.9], dtype=torch.float64)
    moved_second = x + torch.tensor([0.0, 0.001, 0.0], dtype=torch.float64)
    assert close_entrywise(x, moved_third, 1e-5, 1e-6, noise)
    assert not close_entrywise(x, moved_second, 1e-5, 1e-6, noise)


def test_nan_and_infinities_must_stay_where_they_were():
    x = torch.tensor([float("nan"), float("inf"), 1.0], dtype=torch.float64)
    assert close_entrywise(x, x.clone(), 1e-5, 1e-6)
    assert not close_entrywise(x, torch.tensor([1.0, float("inf"), 1.0], dtype=torch.float64), 1e-5, 1e-6)
    assert not close_entrywise(x, torch.tensor([float("nan"), float("-inf"), 1.0], dtype=torch.float64), 1e-5, 1e-6)
    assert entry_noise(x, x.clone()).tolist() == [0.0, 0.0, 0.0]


@pytest.mark.skipif(not probe_available(), reason="this machine cannot set the rounding mode")
def test_rounding_up_and_down_changes_rounding_only_and_is_undone():
    values = torch.rand(10000, dtype=torch.float32) * 1000.0
    nearest = values.sum()
    exact = float(values.double().sum())
    threads = torch.get_num_threads()
    with rounding("upward"):
        upward = float(values.sum())
        third_up = float(torch.tensor(1.0) / 3.0)
    with rounding("downward"):
        downward = float(values.sum())
        third_down = float(torch.tensor(1.0) / 3.0)
    assert torch.get_num_threads() == threads
    assert downward < exact < upward  # every partial sum rounded one way
    assert third_down < third_up
    assert upward - downward <= 1e-4 * exact  # rounding, nothing more
    assert torch.equal(values.sum(), nearest)  # to nearest again afterwards


# --- CPU against CUDA: each entry's noise is the reference's own difference between devices ---

def _device_reports(ref_grads, new_grads):
    from codemod.runtime.compare import encode
    from codemod.runtime.execute import CallRecord, SideResult
    from codemod.runtime.verify import DeviceReport, VerifyResult

    def side(grads):
        call = CallRecord("train call 1", encode(torch.zeros(1)), {"param:w": grads}, encode(()))
        return SideResult(calls=[call], is_module=True)

    cpu = DeviceReport("cpu", side(ref_grads[0]), side(new_grads[0]), "original")
    gpu = DeviceReport("cuda", side(ref_grads[1]), side(new_grads[1]), "original")
    return VerifyResult("m.py::Net", 0, "", [cpu, gpu]), cpu, gpu


@pytest.mark.parametrize("small_moved", [False, True])
def test_cpu_and_cuda_gradients_may_differ_only_where_the_reference_s_do(small_moved):
    """The large entry rounds otherwise on the GPU, in the reference as in the rewrite; the small
    one moving by 1% beside it is a disagreement (at the tensor's scale it passed)."""
    from codemod.runtime.verify import _compare_devices

    grads = torch.tensor([300000.0, 0.5])
    noisy = grads + torch.tensor([1.0, 0.0])
    moved = noisy + torch.tensor([0.0, 0.005 if small_moved else 0.0])
    result, cpu, gpu = _device_reports((grads, noisy), (grads, moved))
    _compare_devices(result, cpu, gpu, None, None)
    assert bool(result.problems) is small_moved, result.problems
