"""The views-allowed reference (error family C, the tensor viewed read after the write) where
the writes that reach the tensor viewed change something autograd saved. Found at stop 52 (dev
case set14/706, stacked-capsule-networks#15: ``torch.split(pose, 1, -1)`` of one capsule's slice of
a ReLU output, then ``theta *= 2 * math.pi``, capsule after capsule).

With the writes reaching the tensor viewed, the ReLU's saved output and each earlier capsule's
saved ``theta`` (``cos(theta)``) change version, so the reference itself failed with "modified by an
inplace operation" and every rewrite was ``unproven``. That failure is a saved-tensor conflict of
the reference's own, judged as the oracle judges one (the writes-into-copies reference already
does): saved tensors are snapshotted, and the gradients are those of the values the forward used.
The maintainers' ``theta = theta * 2 * math.pi`` then verifies (each capsule reads only its own
columns). The look-alike: where a later read of the tensor viewed sees the write and reaches the
result, a copy (``a = a * 2``) is not verified.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.repair import render, repair  # noqa: E402
from codemod.runtime.verify import Verdict, verify  # noqa: E402

CAPSULES = '''\
import torch
from torch import nn


def transform(pose):
    scale, theta = torch.split(pose, 1, -1)
    theta *= 2.0
    return scale * torch.cos(theta)


def compute():
    torch.manual_seed(0)
    lin = nn.Linear(3, 4)
    x = torch.randn(5, 3)
    p = torch.relu(lin(x)).view(5, 2, 2)
    outs = [transform(p[:, i, :]) for i in range(2)]
    loss = sum(o.sum() for o in outs)
    loss.backward()
    return {"loss": loss.detach(), "w": lin.weight.grad, "b": lin.bias.grad}
'''
FIXED = CAPSULES.replace("    theta *= 2.0\n", "    theta = theta * 2.0\n")
# hand-written reference: each capsule's angle scaled out of place, read column by column
HAND = CAPSULES.replace("    scale, theta = torch.split(pose, 1, -1)\n    theta *= 2.0\n",
                        "    scale, theta = pose[:, :1], pose[:, 1:] * 2.0\n")

# look-alike: the tensor viewed is read after the write, and that read is the result
READ_AFTER = '''\
import torch


def compute():
    torch.manual_seed(0)
    w = torch.randn(6, requires_grad=True)
    y = torch.sigmoid(w * 1.0)
    a, b = y.chunk(2)
    a *= 2
    loss = (y * 3).sum()
    loss.backward()
    return {"loss": loss.detach(), "w": w.grad}
'''
COPY = READ_AFTER.replace("    a *= 2\n", "    a = a * 2\n")
# what the program computes with the write reaching `y` (the sigmoid's gradient from the values it made)
AS_COMPUTED = READ_AFTER.replace("    y = torch.sigmoid(w * 1.0)\n    a, b = y.chunk(2)\n",
                                 "    y = torch.sigmoid(w * 1.0).clone()\n    a, b = y.tensor_split(2)\n")


def _run(text):
    namespace = {}
    exec(compile(text, "<case>", "exec"), namespace)
    return namespace["compute"]()


def test_the_programs_raise_and_the_fixes_run():
    for text in (CAPSULES, READ_AFTER):
        with pytest.raises(RuntimeError, match="returns multiple views"):
            _run(text)
    want, got = _run(HAND), _run(FIXED)
    assert all(torch.allclose(want[k], got[k]) for k in want)
    assert not torch.allclose(_run(COPY)["loss"], _run(AS_COMPUTED)["loss"])


def test_a_copy_verifies_against_views_allowed_with_the_saved_tensors_snapshotted(tmp_path):
    path = tmp_path / "capsules.py"
    path.write_text(CAPSULES)
    result = repair(f"{path}::compute", devices=["cpu"])
    assert result.verified, render(result)
    assert result.repaired == FIXED, result.repaired
    assert result.verification.devices[0].reference == "views allowed"
    want, got = _run(HAND), _run(result.repaired)
    assert all(torch.allclose(want[k], got[k]) for k in want)


def test_a_copy_that_a_later_read_would_see_is_not_verified(tmp_path):
    path = tmp_path / "read_after.py"
    path.write_text(READ_AFTER)
    device = verify(f"{path}::compute", rewritten_source=COPY, devices=["cpu"]).devices[0]
    assert device.verdict is Verdict.NOT_VERIFIED, (device.reference, device.reasons, device.differences)
    assert device.reference == "views allowed"
    right = verify(f"{path}::compute", rewritten_source=AS_COMPUTED, devices=["cpu"]).devices[0]
    assert right.verdict is Verdict.VERIFIED, (right.reference, right.reasons, right.differences)
