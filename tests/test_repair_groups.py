"""Groups of real failures ``repair FILE::TARGET`` missed (issue 23), each on a new case
written in the shape of public code, not a copy of a bench case:

- an op saved an input it was given inside a list (``torch.einsum(eq, [a, b])``) or a view of
  an input (``torch.matmul`` of a batch by a matrix folds the batch: ``mm`` saves the folded
  view): the locator named it the op's output, so the clone went on the result. The memory
  bank is the cross-batch memory of metric-learning code (a buffer of past embeddings, written
  under ``no_grad`` after the similarities were taken).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.locate import locate_target  # noqa: E402
from codemod.runtime.repair import render, repair  # noqa: E402

MEMORY_BANK = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F


class CrossBatchMemory(nn.Module):
    def __init__(self, dim=4, size=6):
        super().__init__()
        self.register_buffer("bank", F.normalize(torch.randn(size, dim), dim=1))
        self.ptr = 0

    def forward(self, feats):
        sim = torch.einsum("nd,md->nm", [feats, self.bank])
        with torch.no_grad():
            n = feats.shape[0]
            self.bank[self.ptr:self.ptr + n] = feats.detach()
            self.ptr = (self.ptr + n) % self.bank.shape[0]
        return sim


def compute():
    torch.manual_seed(0)
    enc = nn.Linear(5, 4)
    mem = CrossBatchMemory()
    feats = F.normalize(enc(torch.randn(3, 5)), dim=1)
    loss = mem(feats).logsumexp(1).mean()
    loss.backward()
    return {"w": enc.weight.grad, "b": enc.bias.grad}
'''

PROTOTYPES = '''\
import torch
import torch.nn as nn


class PrototypeHead(nn.Module):
    def __init__(self, dim=4, k=3):
        super().__init__()
        self.proto = nn.Parameter(torch.randn(k, dim))

    def forward(self, h):
        scores = torch.matmul(h, self.proto.t())
        h /= h.norm(dim=-1, keepdim=True)
        return scores, h


def compute():
    torch.manual_seed(0)
    enc = nn.Linear(5, 4)
    head = PrototypeHead()
    scores, h = head(enc(torch.randn(2, 3, 5)))
    (scores.pow(2).sum() + h.sum()).backward()
    return {"w": enc.weight.grad, "p": head.proto.grad}
'''


def _run(text: str) -> dict:
    namespace: dict = {}
    exec(compile(text, "<case>", "exec"), namespace)
    return namespace["compute"]()


def test_an_input_passed_in_a_list_is_named_and_cloned_where_it_is_passed(tmp_path):
    path = tmp_path / "memory.py"
    path.write_text(MEMORY_BANK)
    located = locate_target(f"{path}::compute")
    saves = [c for c in located.conflicts if c.save is not None and c.save.line == 13]
    assert saves and all(c.saved_as == "input 1.1" for c in saves), located.conflicts
    result = repair(f"{path}::compute", devices=["cpu"])
    assert result.verified, render(result)
    assert '[feats, self.bank.clone()]' in result.repaired, result.repaired
    expected = _run(MEMORY_BANK.replace("[feats, self.bank]", "[feats, self.bank.clone()]"))
    got = _run(result.repaired)
    assert all(torch.allclose(got[k], expected[k]) for k in expected)


def test_an_input_an_op_saved_a_view_of_is_named_as_that_input(tmp_path):
    path = tmp_path / "proto.py"
    path.write_text(PROTOTYPES)
    located = locate_target(f"{path}::compute")
    saves = [c for c in located.conflicts if c.save is not None and c.save.line == 11]
    assert saves and all(c.saved_as == "input 0" for c in saves), [c.describe() for c in located.conflicts]


# An in-place flag that reaches the module through a mapping (``act_layer(**act_kwargs)``, the
# way timm-style blocks and torchvision.ops.MLP pass ``inplace``): not a flag switched on later.
ACT_KWARGS = '''\
import torch
import torch.nn as nn


class GatedBlock(nn.Module):
    def __init__(self, dim, act_layer=nn.ELU, act_kwargs=None):
        super().__init__()
        act_kwargs = act_kwargs or {}
        self.fc1 = nn.Linear(dim, dim)
        self.gate = nn.Sigmoid()
        self.act = act_layer(**act_kwargs)
        self.fc2 = nn.Linear(dim, dim)

    def forward(self, x):
        return self.fc2(self.act(self.gate(self.fc1(x))))


def compute():
    torch.manual_seed(0)
    block = GatedBlock(4, act_kwargs={"inplace": True})
    block(torch.randn(2, 4)).pow(2).sum().backward()
    return {n: p.grad for n, p in block.named_parameters()}
'''


def test_an_inplace_flag_passed_through_a_mapping_is_turned_off_where_the_module_is_built(tmp_path):
    path = tmp_path / "block.py"
    path.write_text(ACT_KWARGS)
    located = locate_target(f"{path}::compute")
    assert [c.kind for c in located.conflicts] == ["saved-then-modified"], [c.describe() for c in located.conflicts]
    result = repair(f"{path}::compute", devices=["cpu"])
    assert result.verified, render(result)
    fixed = ACT_KWARGS.replace("act_layer(**act_kwargs)", 'act_layer(**{**act_kwargs, "inplace": False})')
    assert result.repaired == fixed, result.repaired
    expected = _run(ACT_KWARGS.replace('{"inplace": True}', "{}"))
    got = _run(result.repaired)
    assert all(torch.allclose(got[k], expected[k]) for k in expected)


# Leaves kept in a container and filled in place (``dec_s[0][1][i, :] = h``: the preallocated
# ``torch.zeros(..., requires_grad=True)`` states of seq2seq code): the copy goes on the
# container's item, the tensor the write goes into, not on the container.
STATES_IN_A_LIST = '''\
import torch
import torch.nn as nn


def compute():
    torch.manual_seed(0)
    cell = nn.GRUCell(3, 4)
    xs = torch.randn(3, 2, 3)
    slots = [torch.zeros(3, 4, requires_grad=True) for _ in range(2)]
    h = torch.zeros(2, 4)
    for t in range(3):
        h = cell(xs[t], h)
        slots[0][t, :] = h[0]
        slots[1][t] = h[1]
    loss = (slots[0] * slots[1]).sum()
    loss.backward()
    return {n: p.grad for n, p in cell.named_parameters()}
'''


def test_a_leaf_kept_in_a_list_is_copied_as_the_item_not_the_list(tmp_path):
    path = tmp_path / "slots.py"
    path.write_text(STATES_IN_A_LIST)
    result = repair(f"{path}::compute", devices=["cpu"])
    assert result.verified, render(result)
    assert "slots[0] = slots[0].clone()" in result.repaired and "slots = slots.clone()" not in result.repaired
    expected = _run(STATES_IN_A_LIST.replace("requires_grad=True) for", ") for"))
    got = _run(result.repaired)
    assert all(torch.allclose(got[k], expected[k]) for k in expected)


# `.data` read in a forward under the harness (issue 23's group 4): a power iteration on
# ``w.data`` as SNGAN-style spectral normalisation code does it, with a sigmoid output scaled in
# place after it. The harness runs it as python does, as a function and as a module target.
POWER_ITERATION = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F


class SNLinear(nn.Module):
    def __init__(self, fin=4, fout=3):
        super().__init__()
        self.lin = nn.Linear(fin, fout)
        self.register_buffer("u", F.normalize(torch.randn(fout), dim=0))

    def forward(self, x):
        w = self.lin.weight
        v = F.normalize(torch.mv(w.data.t(), self.u), dim=0)
        self.u = F.normalize(torch.mv(w.data, v), dim=0)
        sigma = torch.dot(self.u, torch.mv(w, v))
        h = torch.sigmoid(F.linear(x, w / sigma, self.lin.bias))
        h *= 2
        return h


def compute():
    torch.manual_seed(0)
    m = SNLinear()
    m(torch.randn(5, 4)).pow(2).sum().backward()
    return {n: p.grad for n, p in m.named_parameters()}
'''


@pytest.mark.parametrize("target, shapes", [("compute", None), ("SNLinear", [(5, 4)])])
def test_a_forward_that_reads_data_runs_under_the_harness_and_verifies(tmp_path, target, shapes):
    path = tmp_path / "sn.py"
    path.write_text(POWER_ITERATION)
    result = repair(f"{path}::{target}", devices=["cpu"], input_shapes=shapes)
    assert result.verified, render(result)
    assert "h = h * 2" in result.repaired or "h = h.clone()" in result.repaired, result.repaired


# A custom Function whose backward scales the derivative it saved in forward in place
# (``grad_x *= grad_output``, as kernels that compute their derivative in forward do): a second
# backward through the retained graph fails. The write is in backward: the locator follows the
# Function's backward, and keeps such a write only where a later backward finds the tensor changed.
SAVED_DERIVATIVE = '''\
import torch
import torch.nn as nn


class SoftplusWithDerivative(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(torch.sigmoid(x))
        return torch.nn.functional.softplus(x)

    @staticmethod
    def backward(ctx, grad_output):
        (grad_x,) = ctx.saved_tensors
        grad_x *= grad_output
        return grad_x


def compute():
    torch.manual_seed(0)
    enc, head = nn.Linear(3, 4), nn.Linear(4, 1)
    loss = head(SoftplusWithDerivative.apply(enc(torch.randn(5, 3)))).pow(2).mean()
    (w_grad,) = torch.autograd.grad(loss, [enc.weight], retain_graph=True)
    b_grad, head_grad = torch.autograd.grad(loss, [enc.bias, head.weight])
    return {"enc.w": w_grad, "enc.b": b_grad, "head.w": head_grad}
'''


def test_a_write_in_a_custom_backward_into_what_it_saved_is_located_and_fixed_there(tmp_path):
    path = tmp_path / "softplus.py"
    path.write_text(SAVED_DERIVATIVE)
    located = locate_target(f"{path}::compute")
    assert [(c.mutation and c.mutation.line) for c in located.conflicts] == [14], [c.describe() for c in located.conflicts]
    result = repair(f"{path}::compute", devices=["cpu"])
    assert result.verified, render(result)
    assert "grad_x = grad_x * grad_output" in result.repaired, result.repaired
    expected = _run(SAVED_DERIVATIVE.replace("grad_x *= grad_output", "grad_x = grad_x * grad_output"))
    got = _run(result.repaired)
    assert all(torch.allclose(got[k], expected[k]) for k in expected)


def test_a_write_in_a_custom_backward_no_later_backward_sees_is_no_conflict(tmp_path):
    path = tmp_path / "softplus_once.py"
    path.write_text(SAVED_DERIVATIVE.replace(", retain_graph=True", "").replace(
        "    b_grad, head_grad = torch.autograd.grad(loss, [enc.bias, head.weight])\n", "").replace(
        ', "enc.b": b_grad, "head.w": head_grad', ""))
    located = locate_target(f"{path}::compute")
    assert located.conflicts == [], [c.describe() for c in located.conflicts]


# The functionalize cross-check of the snapshot oracle (module targets) on a forward that reads
# ``.data``: a cosine classifier's per-class norms taken from ``self.fc.weight.data`` (constants,
# as ``.data`` makes them), a softmax output clamped in place. ``torch.func.functionalize``
# differentiates through ``.data``, so its gradients differ from what the program computes:
# the cross-check does not apply there and must say so, not report a disagreement beside
# "Verified." (nor one the verdict ignores).
COSINE_HEAD = '''\
import torch
import torch.nn as nn


class CosineHead(nn.Module):
    def __init__(self, fin=6, k=4):
        super().__init__()
        self.fc = nn.Linear(fin, k, bias=False)

    def forward(self, x):
        norms = self.fc.weight.data.norm(dim=1)
        p = torch.softmax(self.fc(x) / norms, dim=1)
        p.clamp_(min=1e-4)
        return p
'''

# Writes functionalize does not follow: one into a view of a detached alias (the write reaches
# the tensor autograd saved, outside autograd's knowledge), and one under ``no_grad``.
DETACHED_WRITE = '''\
import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self, fin=6):
        super().__init__()
        self.fc = nn.Linear(fin, 4)

    def forward(self, x):
        h = torch.sigmoid(self.fc(x))
        h.detach()[:, 0].mul_(0.5)
        return h * h
'''

NO_GRAD_WRITE = '''\
import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self, fin=6):
        super().__init__()
        self.fc = nn.Linear(fin, 4)

    def forward(self, x):
        h = torch.sigmoid(self.fc(x))
        with torch.no_grad():
            h[:, 0] = 0.5
        return h * h
'''

HOOKED = '''\
import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self, fin=6):
        super().__init__()
        self.fc = nn.Linear(fin, 4)

    def forward(self, x):
        h = torch.sigmoid(self.fc(x))
        if h.requires_grad:
            h.register_hook(lambda g: g * 3)
        h += 1
        return h * h
'''


def test_the_functionalize_cross_check_does_not_apply_to_a_forward_that_reads_data(tmp_path):
    from codemod.runtime.verify import verify

    path = tmp_path / "cosine.py"
    path.write_text(COSINE_HEAD)
    result = verify(f"{path}::CosineHead", devices=["cpu"], input_shapes=[(5, 6)])
    check = result.devices[0].oracle_crosscheck
    assert check.startswith("n/a") and "`.data`" in check and "cosine.py:11" in check, check
    assert result.verified, result.devices[0].problems


@pytest.mark.parametrize("source, why", [(DETACHED_WRITE, "detach"), (NO_GRAD_WRITE, "grad off"),
                                         (HOOKED, "requires_grad")])
def test_the_functionalize_cross_check_does_not_apply_where_it_does_not_follow_the_program(tmp_path, source, why):
    from codemod.runtime.verify import verify

    path = tmp_path / "gate.py"
    path.write_text(source)
    result = verify(f"{path}::Gate", devices=["cpu"], input_shapes=[(5, 6)])
    check = result.devices[0].oracle_crosscheck
    assert result.devices[0].original.status == "inplace-error"
    assert check.startswith("n/a") and why in check, check


def test_a_rewrite_that_agrees_with_one_of_two_disagreeing_oracles_is_unproven(tmp_path):
    # Where the cross-check applies and disagrees, the reference itself is in doubt. No program
    # is known to reach this (every construct found where functionalize departs from the
    # program is named above), so the run is a real one and the disagreement is set on it.
    from codemod.config import Settings
    from codemod.runtime.verify import Verdict, _doubt, verify

    path = tmp_path / "gate.py"
    path.write_text(DETACHED_WRITE.replace("h.detach()[:, 0].mul_(0.5)", "h.mul_(0.5)"))
    result = verify(f"{path}::Gate", devices=["cpu"], input_shapes=[(5, 6)], settings=Settings(unsafe_fixes=True))
    device = result.devices[0]
    assert device.verdict is Verdict.VERIFIED and device.oracle_crosscheck == "max abs 0", device.problems
    device.reference_run.oracles_disagree = "train call 1: grad param:fc.weight: values differ"
    _doubt(device, device.reference_run)
    assert device.verdict is Verdict.UNPROVEN
    assert any("cross-check disagrees" in r for r in device.reasons)
