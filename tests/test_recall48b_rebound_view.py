"""Recall (recall48b), families B and A: a helper rebinds its parameter to a view of itself for
sure (``x = x[:, :1]``, ``x = x.unsqueeze(0)``, ``x, t = x[:, :1], x[:, 1:]``, ``x = same(x)``
of a helper of the file handing its argument back), then writes the name in place. The write
reaches the caller's tensor (a view shares its storage and its version counter): where every
call passes a leaf that requires grad, PyTorch raises "a view of a leaf Variable that requires
grad is being used in an in-place operation" (or "a leaf Variable ..."); where the caller's
tensor was saved for backward, backward raises "modified by an inplace operation".

Before, the analysis followed the caller's tensor into a write only through a name of its own
(``a = x[:, :1]; a *= 2``): the name rebound to a view of itself lost the parameter. Library
code does this everywhere (``x = x.unsqueeze(0)`` of a batch adjuster, ``x, t = x[:, :1],
x[:, 1:]`` of a feature transform). Look-alikes that must not be proven: a caller passing a
tensor that requires no grad, a rebinding that copies (``x = x[[0, 1]]``, ``x = x * 1``), a
helper returning a new tensor. Programs written from the pattern, run with torch.
"""

from __future__ import annotations

import torch

from codemod.config import Settings
from tests.programs import fixed_source, process_in_project, raises_inplace, run_program

SLICE = """\
import torch


def scale_first(x):
    x = x[:, :1]
    x *= 2.0
    return x


def main():
    w = torch.rand(5, 2, requires_grad=True)
    out = scale_first(w)
    out.sum().backward()
    return [w.grad]
"""

UNPACKED = """\
import torch


def periodic(x):
    x, t = x[:, :1], x[:, 1:]
    x *= 3.0
    return torch.cat([torch.sin(x), t], 1)


def main():
    w = torch.rand(5, 2, requires_grad=True)
    out = periodic(w)
    out.sum().backward()
    return [w.grad]
"""

HANDED_BACK = """\
import torch


def as_batch(t):
    return t


def normalise(x, data_range=255.0):
    x = as_batch(x)
    x /= data_range
    return x.mean()


def main():
    image = torch.rand(2, 3, 4, 4, requires_grad=True)
    loss = normalise(image)
    loss.backward()
    return [image.grad]
"""

SAVED = """\
import torch


def emphasise(h):
    h = h.unsqueeze(0)
    h.mul_(2.0)
    return h


def main():
    z = torch.rand(3, 4, requires_grad=True)
    h = torch.sigmoid(z)
    out = emphasise(h)
    (out.sum() + h.sum()).backward()
    return [z.grad]
"""

LEAF = ("a leaf Variable that requires grad", "a view of a leaf Variable")


def proven_at(source: str, text: str):
    result = process_in_project(source, Settings())
    line = source[:source.index(text)].count("\n") + 1
    return [f.code for f in result.findings if f.code.startswith("IPF1") and f.span.line == line]


def test_parameter_rebound_to_its_slice_is_the_callers_leaf():
    assert raises_inplace(SLICE, message=LEAF)
    assert proven_at(SLICE, "    x *= 2.0\n") == ["IPF101"]


def test_parameter_unpacked_into_slices_of_itself_is_the_callers_leaf():
    assert raises_inplace(UNPACKED, message=LEAF)
    assert proven_at(UNPACKED, "    x *= 3.0\n") == ["IPF101"]


def test_parameter_handed_back_by_a_helper_is_the_callers_leaf():
    assert raises_inplace(HANDED_BACK, message=LEAF)
    assert proven_at(HANDED_BACK, "    x /= data_range\n") == ["IPF101"]


def test_parameter_rebound_to_a_view_of_a_saved_tensor():
    assert raises_inplace(SAVED)
    assert proven_at(SAVED, "    h.mul_(2.0)\n") == ["IPF103"]


def test_caller_passing_a_tensor_without_grad_is_not_proven():
    for source, text in ((SLICE, "    x *= 2.0\n"), (UNPACKED, "    x *= 3.0\n"),
                         (HANDED_BACK, "    x /= data_range\n")):
        plain = source.replace(", requires_grad=True)", ")").replace("backward()", "sum()")
        assert plain != source
        run_program(plain)  # data augmentation, a metric on values that need no grad: runs
        assert proven_at(plain, text) == []


def test_rebinding_that_copies_is_not_proven():
    for copy in ("    x = x[[0, 1]]\n", "    x = x * 1\n", "    x = x[:, :1].clone()\n"):
        source = SLICE.replace("    x = x[:, :1]\n", copy)
        assert source != SLICE
        run_program(source)  # a new tensor: the write is allowed
        assert proven_at(source, "    x *= 2.0\n") == []


def test_helper_returning_a_new_tensor_is_not_proven():
    source = HANDED_BACK.replace("    return t\n", "    return t + 0.0\n")
    assert source != HANDED_BACK
    run_program(source)
    assert proven_at(source, "    x /= data_range\n") == []


def test_fix_keeps_the_mutation_a_caller_without_grad_sees():
    """``x = as_batch(x)`` hands the caller's tensor back: ``x /= data_range`` still divides the
    caller's image, which a caller without grad reads afterwards (before, the rebinding hid the
    parameter from the fix's safety, which rewrote the write as safe in the full tier)."""
    source = HANDED_BACK.replace(", requires_grad=True)", ")").replace(
        "    loss.backward()\n    return [image.grad]\n", "    return [image, loss]\n")
    assert source != HANDED_BACK
    want = run_program(source)
    fixed = fixed_source(source, Settings(select=("IPF",)), project=True)
    for got, exp in zip(run_program(fixed), want):
        assert torch.equal(got, exp), fixed


ADJUSTED = HANDED_BACK.replace("def as_batch(t):\n    return t\n",
                               "def as_batch(t):\n    if t.dim() == 3:\n        t = t.unsqueeze(0)\n    return t\n")


def test_helper_handing_back_its_argument_or_a_view_of_it_on_each_path():
    """``as_batch`` returns ``t`` itself (a batch) or ``t.unsqueeze(0)`` (one image): either way
    the caller's leaf, or a view of it."""
    assert ADJUSTED != HANDED_BACK
    assert raises_inplace(ADJUSTED, message=LEAF)
    one_image = ADJUSTED.replace("torch.rand(2, 3, 4, 4,", "torch.rand(3, 4, 4,")
    assert one_image != ADJUSTED
    assert raises_inplace(one_image, message=LEAF)
    for source in (ADJUSTED, one_image):
        assert proven_at(source, "    x /= data_range\n") == ["IPF101"]


def test_helper_copying_on_one_path_is_not_proven():
    source = ADJUSTED.replace("t = t.unsqueeze(0)\n", "t = t.unsqueeze(0).clone()\n").replace(
        "torch.rand(2, 3, 4, 4,", "torch.rand(3, 4, 4,")
    assert source.count(".clone()") == 1 and "rand(3, 4, 4," in source
    run_program(source)  # the copy is written: allowed
    assert proven_at(source, "    x /= data_range\n") == []
