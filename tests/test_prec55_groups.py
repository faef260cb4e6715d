"""Stop 55 (prec55): two false groups of the proven tier (bench/hazard_checks24/prec54b_probes.py),
each a program that runs backward without the in-place error and must not be proven, beside
look-alikes that raise and stay proven:

- non-differentiable-sink, integer forms (synapticflow encoding/encoders.py:319, yaapt-torch
  yaapt.py:526): the op that saved the tensor hands its result only into a write into a tensor made in
  the function, and every later read of that tensor ends where autograd records nothing: a cast to an
  integral or boolean dtype (``.long()``, ``.to(torch.int32)``), an index-producing op (``argmin``,
  ``topk(...).indices``, ``max(dim)[1]``, ``bucketize``, ``searchsorted``), a comparison, ``.item()``,
  ``.tolist()``. No backward reaches the saving op's node. The same ends now count for a saved output
  written in place (``d.min(dim=1).values.long()``; prec53b closed ``float(...)``);
- saver under no_grad (seen by prec54b): closed by nograd54 for ``no_grad``, ``set_grad_enabled(False)``
  and a ``@torch.no_grad()`` helper (checked here again); a result made under ``inference_mode`` is an
  inference tensor, which refuses the write itself: still proven, but never said to be "saved for
  backward".
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.config import Settings  # noqa: E402
from tests.programs import process_in_project, raises_inplace  # noqa: E402
from tests.programs import raises_proven as _real, runs_unproven as _safe  # noqa: E402

# ---------------------------------------------------------------- the `.long()` form (synapticflow)
ENCODE = '''\
import torch


def encode(data, time=10):
    times = torch.zeros(data.numel())
    times[data.flatten() != 0] = 1 / data.flatten()[data.flatten() != 0]
    times *= time / times.max()  # MARK
    SINK
    return spikes


def main():
    data = torch.rand(2, 3, requires_grad=True)
    (encode(data) * data.flatten()).sum().backward()
'''

CASTS = [
    "k = torch.ceil(times).long()",
    "k = torch.ceil(times).int()",
    "k = torch.ceil(times).byte()",
    "k = (times > 5).byte()",
    "k = times.bool()",
    "k = torch.ceil(times).to(torch.long)",
    "k = times.to(dtype=torch.int32)",
    "k = times.type(torch.int16)",
    "k = times.round().to(torch.uint8)",
]


@pytest.mark.parametrize("cast", CASTS)
def test_written_tensor_cast_to_an_integral_dtype_is_not_proven(cast):
    sink = cast + "\n    spikes = torch.zeros(time, data.numel())\n    spikes[0] = k"
    _safe(ENCODE.replace("SINK", sink))


def test_the_synapticflow_shape_is_not_proven():
    _safe(ENCODE.replace("SINK", "times = torch.ceil(times).long()\n    spikes = torch.zeros(time, data.numel())"
                                 "\n    spikes[(times - 1).clamp(0, time - 1), torch.arange(data.numel())] = 1"))


@pytest.mark.parametrize("sink", [
    "spikes = times",  # handed back
    "k = torch.ceil(times).float()\n    spikes = torch.zeros(time, data.numel())\n    spikes[0] = k",  # a float cast
    "k = times.to(torch.float64)\n    spikes = torch.zeros(time, data.numel()).double()\n    spikes[0] = k",
    "k = times.long()\n    spikes = times * 2",  # cast once, but also used with its history
    "spikes = torch.zeros(time, data.numel())\n    spikes[0] = times",  # copied into a returned tensor
])
def test_written_tensor_that_keeps_its_history_stays_proven(sink):
    _real(ENCODE.replace("SINK", sink))


# ---------------------------------------------------------------- the argmin form (yaapt)
PATH = '''\
import torch


def best(pitch, f0_min=60.0):
    n_cand, n_frames = pitch.shape
    trans = torch.zeros((n_cand, n_frames))
    trans[:, 1:] = abs(pitch[:, 1:] - pitch[:, :-1]) / f0_min
    trans[:, 1:] = 0.05 * trans[:, 1:] + trans[:, 1:] ** 2  # MARK
    SINK
    return pitch[path, torch.arange(n_frames)]


def main():
    pitch = (100.0 + 100.0 * torch.rand(4, 12)).requires_grad_(True)
    best(pitch).sum().backward()
'''

INDEX_SINKS = [
    "path = torch.argmin(trans, dim=0)",
    "path = trans.argmax(dim=0)",
    "path = trans.argsort(dim=0)[0]",
    "path = trans.topk(1, dim=0).indices[0]",
    "path = trans.topk(1, dim=0)[1][0]",
    "path = trans.max(dim=0)[1]",
    "path = torch.max(trans, 0).indices",
    "_, path = trans.min(dim=0)",
    "path = trans.min(dim=0).indices.clamp(0, n_cand - 1)",
    "path = torch.bucketize(trans[1], torch.tensor([0.5, 1.0, 2.0]))",
    "path = torch.searchsorted(torch.tensor([0.5, 1.0, 2.0]), trans[1])",
    "path = (trans > 1.0).long().sum(0).clamp(max=n_cand - 1)",
    "path = trans.long().clamp(0, n_cand - 1)[0]",
    "path = trans.to(torch.int64).clamp(0, n_cand - 1)[1]",
    "cost = trans.sum().item()\n    path = torch.zeros(n_frames, dtype=torch.long) + (1 if cost > 1 else 0)",
    "rows = trans[1].tolist()\n    path = torch.tensor([min(n_cand - 1, int(r)) for r in rows])",
    "path = torch.zeros(n_frames, dtype=torch.long)\n    path[trans[1] > 1.0] = 1",
]


@pytest.mark.parametrize("sink", INDEX_SINKS)
def test_written_tensor_only_turned_into_indices_is_not_proven(sink):
    _safe(PATH.replace("SINK", sink))


@pytest.mark.parametrize("sink, back", [
    ("path = torch.argmin(trans, dim=0)", " + trans.sum()"),  # the costs handed back too
    ("path = trans.max(dim=0)[1]\n    w = trans.max(dim=0)[0]", " * w"),  # the values of the max
    ("path = trans.argmax(dim=0)\n    w = trans.to(pitch.dtype)", " + w.sum()"),  # a cast to a float dtype
    ("path = trans.topk(1, dim=0).values.long()[0]\n    w = trans.topk(1, dim=0).values", " + w.sum()"),
    ("path = trans.argmax(dim=0)\n    extra = [trans]", " + extra[0].sum()"),  # kept in a list
])
def test_written_tensor_also_used_with_history_stays_proven(sink, back):
    _real(PATH.replace("SINK", sink).replace("torch.arange(n_frames)]", "torch.arange(n_frames)]" + back))


@pytest.mark.parametrize("alias, use", [
    ("alias = trans", "alias.sum()"),  # the same tensor under another name
    ("part = trans[1:]", "part.sum()"),  # a view made before the write: it sees the write's history
])
def test_written_tensor_read_through_an_alias_stays_proven(alias, use):
    src = PATH.replace("    trans[:, 1:] = abs(", f"    {alias}\n    trans[:, 1:] = abs(").replace(
        "SINK", "path = torch.argmin(trans, dim=0)").replace(
        "torch.arange(n_frames)]", f"torch.arange(n_frames)] + {use}")
    _real(src)


# ---------------------------------------------------------------- a saved output written, integral ends
DIST = '''\
import torch


def spacing(center):
    dist = torch.cdist(center, center)
    dist.fill_diagonal_(float("inf"))  # MARK
    SINK


def main():
    center = torch.rand(5, 3, requires_grad=True)
    out = spacing(center)
    (center.sum() * out).backward()
'''


@pytest.mark.parametrize("sink", [
    "near = dist.min(dim=1).values.long()\n    return near.sum()",
    "near = dist.min(dim=1).values.to(torch.int64)\n    return near.sum()",
    "order = dist.topk(2, dim=1, largest=False).indices\n    return order.sum()",
])
def test_saved_output_only_cast_or_ranked_is_not_proven(sink):
    _safe(DIST.replace("SINK", sink))


@pytest.mark.parametrize("sink", [
    "near = dist.min(dim=1).values.float()\n    return near.sum()",
    "near = dist.min(dim=1).values\n    return near.sum()",
])
def test_saved_output_kept_with_history_stays_proven(sink):
    _real(DIST.replace("SINK", sink))


# ---------------------------------------------------------------- saver under no_grad
MADE = '''\
import torch


def f(x):
    with CONTEXT:
        y = x.exp()
    y.add_(1)  # MARK
    return (x * y).sum()


def main():
    x = torch.randn(3, requires_grad=True)
    f(x).backward()
'''


@pytest.mark.parametrize("context", ["torch.no_grad()", "torch.set_grad_enabled(False)"])
def test_saver_under_no_grad_is_not_proven(context):
    _safe(MADE.replace("CONTEXT", context))


def test_saver_in_a_no_grad_helper_is_not_proven():
    src = MADE.replace("def f(x):\n    with CONTEXT:\n        y = x.exp()",
                       "@torch.no_grad()\ndef made(x):\n    return x.exp()\n\n\ndef f(x):\n    y = made(x)")
    _safe(src)


def _reasons(source: str) -> list:
    result = process_in_project(source, Settings())
    return [(f.code, f.span.line, f.message) for f in result.findings if f.code.startswith("IPF1")]


@pytest.mark.parametrize("context", ["torch.inference_mode()", "torch.inference_mode(True)"])
def test_inference_tensor_write_is_proven_for_what_it_is(context):
    """Under ``inference_mode`` the result is an inference tensor: the write outside the block raises
    ("Inplace update to inference tensor outside InferenceMode"), so it stays proven; nothing was
    saved for backward, and the message says what PyTorch refuses."""
    src = MADE.replace("CONTEXT", context)
    assert raises_inplace(src, message="Inplace update to inference tensor outside InferenceMode")
    found = _reasons(src)
    assert [line for _, line, _ in found] == [7]
    message = found[0][2]
    assert "saved for backward" not in message and "saves for backward" not in message
    assert "inference tensor" in message


def test_inference_decorated_helper_result_is_not_said_saved():
    """(prec56b: a call of a module-level function decorated ``@torch.inference_mode()`` makes an inference tensor.)"""
    src = MADE.replace("def f(x):\n    with CONTEXT:\n        y = x.exp()",
                       "@torch.inference_mode()\ndef made(x):\n    return x.exp()\n\n\ndef f(x):\n    y = made(x)")
    assert raises_inplace(src, message="Inplace update to inference tensor outside InferenceMode")
    found = _reasons(src)
    assert found and all("inference tensor" in message for _, _, message in found)
    for _, _, message in found:
        assert "saves for backward" not in message and "saved for backward" not in message


@pytest.mark.parametrize("decorator", ["@torch.inference_mode(False)", "@torch.no_grad()", ""])
def test_helper_not_in_inference_mode_is_not_said_inference(decorator):
    src = MADE.replace("def f(x):\n    with CONTEXT:\n        y = x.exp()",
                       f"{decorator}\ndef made(x):\n    return x.exp()\n\n\ndef f(x):\n    y = made(x)")
    assert all("inference tensor" not in message for _, _, message in _reasons(src))


def test_grad_on_saver_stays_proven_and_said_saved():
    src = MADE.replace("CONTEXT", "torch.enable_grad()")
    _real(src)
    assert any("saves for backward" in m for _, _, m in _reasons(src))


def test_written_tensor_rounded_keeps_its_history_and_stays_proven():
    """``round`` keeps the dtype (a float tensor with a grad_fn); the builtin ``round(t)`` is not read as
    integral either (torch 2.13 refuses it on a tensor of more than one element)."""
    _real(ENCODE.replace("SINK", "k = times.round()\n    spikes = torch.zeros(time, data.numel())\n    spikes[0] = k"))


LEAF = '''\
import torch


def best(n):
    MADE
    trans[:, 1:] = 0.05 * trans[:, 1:] + trans[:, 1:] ** 2  # MARK
    return torch.argmin(trans, dim=0)


def main():
    return best(5)
'''


@pytest.mark.parametrize("made", [
    "trans = torch.rand((4, n), requires_grad=True)",
    "trans = torch.rand((4, n))\n    trans.requires_grad_()",
])
def test_written_leaf_stays_proven_whatever_its_reads(made):
    """A leaf that requires grad: PyTorch refuses the write itself, wherever the value goes."""
    _real(LEAF.replace("MADE", made), message="a leaf Variable that requires grad")
