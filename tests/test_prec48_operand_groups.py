"""Stop 48 (prec48): two groups of false proofs, each shown on programs written here (torch runs each).

- index-operand: the evidence that an op records a backward ("computed from an argument" of the
  function) was taken from operands that never carry a gradient: the ``dim`` and ``index`` of an
  index/scatter op (``scatter_add``, ``scatter_reduce_``, ``gather``, ``index_add``...), and the
  argument of a method that takes only its shape or dtype (``expand_as``, ``reshape_as``,
  ``view_as``, ``type_as``). torch_geometric 2.8.1 ``utils/_scatter.py:111`` (stop 46's strict
  xfail in tests/test_lead46_shape_argument_methods.py) is one of these.
- grad-mode-arm: ``w = vt.clone() if torch.is_grad_enabled() else vt``: the arm that aliases the
  saved tensor is taken only where grad is off, and then the op that made it (in the same grad
  mode: no switch between them) saved nothing. roma 1.8.0 ``mappings.py:612`` (found at stop 48).

- saved-by-unreached-result: the op that saved the tensor written has a result whose every use,
  through names bound to it, drops the history (``.detach()``, ``.item()``, a comparison,
  ``argmax``, ``int(...)``, a tensor in an ``if`` test): backward never runs into it. pypots 1.5
  ``backbone.py:107`` and transformer-lens 4.3.0 ``jacobian_lens_decomposition.py:303`` (stop 47's
  strict xfails in tests/test_new47_open_unreached_saves.py) are two of these.

The look-alikes (the operand that does carry grad, the alias taken unconditionally, the result
that reaches the output) raise at backward and stay proven.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.config import Settings  # noqa: E402
from codemod.engine.pipeline import process_source  # noqa: E402
from tests.programs import raises_inplace, run_program  # noqa: E402

SCATTER = '''\
import torch


def spread(values, index, dim, size):
    counts = torch.zeros(size).scatter_add(dim, index, torch.ones(index.shape))
    total = counts.exp()
    total.add_(1.0)
    return values / total


def main():
    values = torch.randn(3, requires_grad=True)
    spread(values, torch.tensor([0, 1, 1]), 0, 3).sum().backward()
    return values.grad
'''
SCATTER_RAISES = SCATTER.replace("scatter_add(dim, index, torch.ones(index.shape))", "scatter_add(dim, index, values)")
# the same with the function form and keywords: torch.gather's index is an integer operand
GATHER = SCATTER.replace("torch.zeros(size).scatter_add(dim, index, torch.ones(index.shape))",
                         "torch.gather(torch.ones(size), dim=dim, index=index)")
GATHER_RAISES = GATHER.replace("torch.gather(torch.ones(size), dim=dim, index=index)",
                               "torch.gather(values * 2, dim=dim, index=index)")
SHAPE = '''\
import torch


def weighted(pred, target):
    scale = torch.full((1,), 2.0).expand_as(pred)
    total = scale.exp()
    total.add_(1.0)
    return (pred - target) * total


def main():
    pred = torch.randn(2, 2, requires_grad=True)
    weighted(pred, torch.zeros(2, 2)).sum().backward()
    return pred.grad
'''
SHAPE_RAISES = SHAPE.replace("torch.full((1,), 2.0).expand_as(pred)", "pred.abs().expand_as(target)")

GRAD_MODE = '''\
import torch


def flip_last(a):
    u, s, vt = torch.linalg.svd(a)
    w = vt.clone() if torch.is_grad_enabled() else vt
    w[..., -1, :] *= -1
    return u @ w


def main():
    a = torch.randn(3, 3, requires_grad=True)
    flip_last(a).sum().backward()
    return a.grad
'''
GRAD_MODE_NEGATED = GRAD_MODE.replace("w = vt.clone() if torch.is_grad_enabled() else vt",
                                      "w = vt if not torch.is_grad_enabled() else vt.clone()")
GRAD_MODE_RAISES = GRAD_MODE.replace("w = vt.clone() if torch.is_grad_enabled() else vt", "w = vt")
# the test asks something else than the grad mode: the alias is taken with grad on
OTHER_TEST_RAISES = GRAD_MODE.replace("w = vt.clone() if torch.is_grad_enabled() else vt",
                                      "w = vt.clone() if a.shape[0] > 3 else vt")
# the test asked inside a no_grad block, the write and the saving op outside it: the alias is written with grad on
SWITCHED_RAISES = GRAD_MODE.replace(
    "    w = vt.clone() if torch.is_grad_enabled() else vt\n",
    "    with torch.no_grad():\n        w = vt.clone() if torch.is_grad_enabled() else vt\n")
# grad turned on in the function: the saving op may run with grad on while the test runs with it off
ENABLED_RAISES = GRAD_MODE.replace(
    "    u, s, vt = torch.linalg.svd(a)\n    w = vt.clone() if torch.is_grad_enabled() else vt\n",
    "    with torch.enable_grad():\n        u, s, vt = torch.linalg.svd(a)\n"
    "    w = vt.clone() if torch.is_grad_enabled() else vt\n").replace(
    "    flip_last(a).sum().backward()", "    with torch.no_grad():\n        out = flip_last(a)\n    out.sum().backward()").replace(
    "    return u @ w\n", "    return u\n")  # (u requires grad: made with grad on)

def library(source: str) -> str:
    """The functions without ``main``: no caller in the file, the arguments are the only evidence."""
    return source.split("\n\ndef main")[0] + "\n"


def proven(source: str) -> list:
    result = process_source(source.encode(), "case.py", Settings())
    assert result.error is None
    return [(f.code, f.span.line) for f in result.findings if f.code.startswith("IPF1")]


@pytest.mark.parametrize("source", [SCATTER, GATHER, SHAPE], ids=["scatter-dim-index", "gather-keywords", "expand_as"])
def test_an_integer_or_shape_operand_is_no_evidence_of_grad(source):
    assert torch.isfinite(run_program(source)).all()  # backward runs: nothing saved was written
    assert proven(library(source)) == []
    assert proven(source) == []


@pytest.mark.parametrize("source", [SCATTER_RAISES, GATHER_RAISES, SHAPE_RAISES],
                         ids=["scatter-src", "gather-input", "expand_as-receiver"])
def test_the_differentiable_operand_stays_evidence(source):
    assert raises_inplace(source)
    assert proven(library(source)) == [("IPF103", 7)]


@pytest.mark.parametrize("source", [GRAD_MODE, GRAD_MODE_NEGATED], ids=["else-arm", "negated-test"])
def test_an_alias_taken_only_with_grad_off_is_not_proven(source):
    assert torch.isfinite(run_program(source)).all()
    with torch.no_grad():  # the alias arm runs here, and nothing was saved
        space: dict = {}
        exec(compile(source, "case.py", "exec"), space)
        space["flip_last"](torch.randn(3, 3))
    assert proven(source) == []
    assert proven(library(source)) == []


@pytest.mark.parametrize("source", [GRAD_MODE_RAISES, OTHER_TEST_RAISES],
                         ids=["alias-always", "test-not-grad-mode"])
def test_an_alias_taken_with_grad_on_stays_proven(source):
    assert raises_inplace(source)
    assert proven(source) == [("IPF104", 7)]


@pytest.mark.parametrize("source, line", [(SWITCHED_RAISES, 8), (ENABLED_RAISES, 8)],
                         ids=["test-in-no-grad-block", "grad-turned-on"])
def test_a_grad_mode_test_in_another_grad_mode_than_the_write_or_the_save_stays_proven(source, line):
    assert raises_inplace(source)
    assert proven(library(source)) == [("IPF104", line)]  # (without a caller: main runs it under no_grad)


DETACHED = '''\
import torch


def scale_rows(h, w):
    h = h @ w
    energy = (h * h).sum(-1, keepdim=True)
    energy = energy.detach()
    h /= energy.sqrt() + 1.0
    return h


def main():
    x = torch.randn(4, 3)
    w = torch.randn(3, 3, requires_grad=True)
    scale_rows(x, w).sum().backward()
    return w.grad
'''
DETACHED_RAISES = DETACHED.replace("    energy = energy.detach()", "    energy = energy * 1.0")
MASKED = '''\
import torch


def pick(scores, w):
    banned = torch.zeros(scores.shape[0], dtype=torch.bool)
    logits = scores @ w
    for _ in range(2):
        masked = logits.masked_fill(banned, -1.0)
        top = masked.max().item()
        if bool((masked >= top).any()):
            banned[int(torch.argmax(masked))] = True
    return logits.sum() * 2


def main():
    scores = torch.randn(5, 3)
    w = torch.randn(3, requires_grad=True)
    pick(scores, w).backward()
    return w.grad
'''
MASKED_RAISES = MASKED.replace("    return logits.sum() * 2", "    return logits.sum() * 2 + masked.sum()")
# the dropped value handed to a list: kept where the analysis does not follow it
KEPT_RAISES = DETACHED.replace("    energy = energy.detach()", "    kept = [energy]\n    energy = energy.detach()").replace(
    "    return h\n", "    return h + kept[0]\n")


@pytest.mark.parametrize("source", [DETACHED, MASKED], ids=["detached", "item-compare-argmax"])
def test_a_save_whose_result_never_reaches_backward_is_not_proven(source):
    assert torch.isfinite(run_program(source)).all()
    assert proven(source) == []


@pytest.mark.parametrize("source, found", [(DETACHED_RAISES, ("IPF101", 8)), (MASKED_RAISES, ("IPF104", 11)),
                                           (KEPT_RAISES, ("IPF101", 9))],
                         ids=["not-detached", "masked-returned", "kept-in-a-list"])
def test_a_save_whose_result_reaches_the_output_stays_proven(source, found):
    assert raises_inplace(source)
    assert proven(source) == [found]
