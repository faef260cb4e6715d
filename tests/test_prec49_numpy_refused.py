"""Stop 49 (lead): a write that a `.numpy()` of the saved tensor refuses to reach (precision group).

rwkv 0.8 ``utils.py:82`` and ``:84`` (labelled false at stop 47, bench/hazard_checks24): ``probs =
F.softmax(logits)`` saves its result; on the branch that writes ``probs[probs < cutoff] = 0``, an earlier
statement of that branch runs ``torch.cumsum(sorted_probs).cpu().numpy()`` with ``sorted_probs`` built from
``probs`` through differentiable steps. Where ``probs`` requires grad (the only case in which the softmax
saved it for a backward), PyTorch refuses that `.numpy()` ("Can't call numpy() on Tensor that requires
grad") before the write runs; where it requires none, nothing was saved. Either way the write is no
hazard, so it is not proven. The group: on every path from the save to the write (the statements of
the blocks that lead to it, through `if` branches), a `.numpy()` without `force=True` of a tensor that
carries the save's result runs first.

The look-alikes stay proven and raise the in-place error when run: the `.numpy()` of a detached
copy, of `force=True`, or one inside a branch the path to the write may skip.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import proven, raises_inplace, run_program  # noqa: E402

SAMPLER = '''\
import torch
import torch.nn.functional as F


def sample(logits, top_p):
    probs = F.softmax(logits.float(), dim=-1)
    if probs.device.type == "meta":
        return 0
    else:
        sorted_ids = torch.argsort(probs)
        sorted_probs = probs[sorted_ids]
        sorted_probs = torch.flip(sorted_probs, dims=(0,))
        cumulative = torch.cumsum(sorted_probs, dim=-1).cpu().numpy()
        cutoff = float(sorted_probs[int((cumulative >= top_p).argmax())])
        probs[probs < cutoff] = 0
        return int(torch.multinomial(probs, num_samples=1)[0])


def main():
    return sample(torch.randn(10, requires_grad=True), 0.8)


def main_without_grad():
    return sample(torch.randn(10), 0.8)
'''
DETACHED = SAMPLER.replace("torch.cumsum(sorted_probs, dim=-1).cpu().numpy()",
                           "torch.cumsum(sorted_probs, dim=-1).detach().cpu().numpy()")
FORCED = SAMPLER.replace("torch.cumsum(sorted_probs, dim=-1).cpu().numpy()",
                         "torch.cumsum(sorted_probs, dim=-1).cpu().numpy(force=True)")
SKIPPABLE = SAMPLER.replace(
    "        cumulative = torch.cumsum(sorted_probs, dim=-1).cpu().numpy()\n",
    "        cumulative = torch.cumsum(sorted_probs, dim=-1).detach().cpu().numpy()\n"
    "        if top_p > 1:\n"
    "            print(probs.numpy())\n")


def _returns_probs(source: str) -> str:
    return source.replace("        return int(torch.multinomial(probs, num_samples=1)[0])",
                          "        return probs") + \
        "\n\ndef run_backward():\n    logits = torch.randn(10, requires_grad=True)\n" \
        "    (sample(logits, 0.8) * torch.arange(10.0)).sum().backward()\n    return logits.grad\n"


def _line(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def test_the_refused_numpy_runs_first_with_grad_and_without_grad_nothing_fails():
    with pytest.raises(RuntimeError, match="numpy"):
        run_program(SAMPLER)
    assert isinstance(run_program(SAMPLER, "main_without_grad"), int)


def test_a_write_behind_a_refused_numpy_is_not_proven():
    write = _line(SAMPLER, "probs[probs < cutoff] = 0")
    assert ("IPF104", write) not in proven(SAMPLER)


@pytest.mark.parametrize("source", [DETACHED, FORCED, SKIPPABLE], ids=["detached", "force", "skippable-branch"])
def test_the_look_alikes_stay_proven_and_raise(source):
    """(prec56b: as written, ``probs`` then only feeds ``torch.multinomial``, whose int64 samples carry no
    gradient, so no backward reaches the softmax: the look-alike is the form that hands ``probs`` back.)"""
    source = _returns_probs(source)
    write = _line(source, "probs[probs < cutoff] = 0")
    assert ("IPF104", write) in proven(source)
    assert raises_inplace(source, "run_backward")


def test_probabilities_only_sampled_are_not_proven():
    """Without the refused ``.numpy()`` (a detached copy of it), the written ``probs`` only reaches
    ``torch.multinomial``'s samples and an ``int``: no backward reaches the softmax that saved it (prec56b)."""
    write = _line(DETACHED, "probs[probs < cutoff] = 0")
    assert ("IPF104", write) not in proven(DETACHED)
    assert isinstance(run_program(DETACHED), int)
