"""A device the tool adds by default (CUDA, when present) where the program does not run as written.

Found on an H200 at stop 49: `repair` left reports unwritten on the GPU machine that it writes on a CPU one
(tabnet's `X.to(self.device)` with `device="cpu"`, pymarl's `self.device = "cpu"`): the harness runs the
target under `torch.device("cuda")`, the program moves its data back to the CPU, the original fails there
for another reason before any call completes, nothing is compared on that device, and the verdict
(the worst over the devices) said "not verified". A device the user did not name is tried; where the
original does not run on it as written, it is reported as not run and decides nothing. A device the user
names (`--device cuda`) is required, as before.

On a CPU-only machine the same path is shown with the meta device (real torch: a program that copies its
data to the CPU cannot run there either); the CUDA-marked tests show it with the device it is for.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.verify import Verdict, render_table, verify  # noqa: E402

PINNED = '''import torch


def compute():
    torch.manual_seed(0)
    lin = torch.nn.Linear(4, 3)
    x = torch.randn(2, 4).to("cpu")  # the program keeps its data on the CPU
    h = torch.sigmoid(lin(x))
    h += 1
    return h.sum()
'''
RIGHT = PINNED.replace("h += 1", "h = h + 1")
WRONG = PINNED.replace("h += 1", "h = h + 2")
PORTABLE = PINNED.replace('.to("cpu")  # the program keeps its data on the CPU', "")


def target(tmp_path, text=PINNED):
    path = tmp_path / "model.py"
    path.write_text(text)
    return f"{path}::compute"


def test_the_original_really_fails_on_the_added_device():
    torch.manual_seed(0)
    with pytest.raises(Exception), torch.device("meta"):
        lin = torch.nn.Linear(4, 3)
        lin(torch.randn(2, 4).to("cpu")).sum()


def test_an_added_device_that_cannot_run_the_program_decides_nothing(tmp_path):
    result = verify(target(tmp_path), rewritten_source=RIGHT, devices=["cpu"], optional_devices=["meta"])
    cpu, meta = result.devices
    assert cpu.verdict is Verdict.VERIFIED and cpu.compared.evidence > 0
    assert meta.not_run and "does not run on meta as written" in meta.not_run, meta.not_run
    assert result.verdict is Verdict.VERIFIED
    table = render_table(result)
    assert "not run" in table and "meta: not run: the original does not run on meta as written" in table
    assert table.rstrip().endswith("Verified.")
    assert result.to_json()["devices"][1]["not_run"] == meta.not_run


def test_a_wrong_rewrite_stays_not_verified_beside_a_device_not_run(tmp_path):
    result = verify(target(tmp_path), rewritten_source=WRONG, devices=["cpu"], optional_devices=["meta"])
    assert result.devices[1].not_run
    assert result.verdict is Verdict.NOT_VERIFIED


def test_a_named_device_is_required(tmp_path):
    result = verify(target(tmp_path), rewritten_source=RIGHT, devices=["cpu", "meta"])
    assert not result.devices[1].not_run
    assert result.verdict is not Verdict.VERIFIED


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_by_default_on_a_program_that_keeps_its_data_on_the_cpu(tmp_path):
    result = verify(target(tmp_path), rewritten_source=RIGHT)
    assert [d.device for d in result.devices] == ["cpu", "cuda"]
    assert result.devices[1].not_run and result.verdict is Verdict.VERIFIED, render_table(result)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_by_default_on_a_portable_program_is_compared(tmp_path):
    result = verify(target(tmp_path, PORTABLE), rewritten_source=PORTABLE.replace("h += 1", "h = h + 1"))
    cuda = result.devices[1]
    assert not cuda.not_run and cuda.verdict is Verdict.VERIFIED, render_table(result)


# Found on an H200 at stop 50 (sockeye 2302): the original's in-place error comes *before* the point
# where the program's CPU-pinned data meets the device, so the original "ran into the in-place error"
# there; the reference run (the program's meaning) and the rewritten then fail at the same later
# point with the same device error. Nothing can be compared on that device either.
LEAF_FIRST = '''import torch


def compute():
    torch.manual_seed(0)
    w = torch.randn(4, 3, requires_grad=True)
    w[0] = 1.0  # the leaf error, before the data meets the device
    x = torch.randn(2, 4).to("cpu")  # the program keeps its data on the CPU
    return (x @ w).sum()
'''
LEAF_RIGHT = LEAF_FIRST.replace("    w[0] = 1.0", "    with torch.no_grad():\n        w[0] = 1.0")
LEAF_WRONG = LEAF_FIRST.replace("    w[0] = 1.0", "    with torch.no_grad():\n        w[0] = 2.0")


def test_in_place_error_first_then_the_meaning_cannot_run_on_the_added_device(tmp_path):
    result = verify(target(tmp_path, LEAF_FIRST), rewritten_source=LEAF_RIGHT, devices=["cpu"],
                    optional_devices=["meta"])
    cpu, meta = result.devices
    assert cpu.verdict is Verdict.VERIFIED and cpu.compared.evidence > 0, render_table(result)
    assert meta.original.status == "inplace-error", meta.original
    assert meta.not_run and "the run that gives its meaning fails there" in meta.not_run, render_table(result)
    assert result.verdict is Verdict.VERIFIED


def test_in_place_error_first_a_wrong_rewrite_stays_not_verified(tmp_path):
    result = verify(target(tmp_path, LEAF_FIRST), rewritten_source=LEAF_WRONG, devices=["cpu"],
                    optional_devices=["meta"])
    assert result.devices[1].not_run
    assert result.verdict is Verdict.NOT_VERIFIED


def test_in_place_error_first_a_named_device_is_required(tmp_path):
    result = verify(target(tmp_path, LEAF_FIRST), rewritten_source=LEAF_RIGHT, devices=["cpu", "meta"])
    assert not result.devices[1].not_run
    assert result.verdict is not Verdict.VERIFIED


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_by_default_in_place_error_first_on_a_cpu_pinned_program(tmp_path):
    result = verify(target(tmp_path, LEAF_FIRST), rewritten_source=LEAF_RIGHT)
    assert result.devices[1].not_run and result.verdict is Verdict.VERIFIED, render_table(result)
