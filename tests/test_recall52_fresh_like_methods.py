"""``buf = x.new_zeros(n)`` is a tensor whatever ``x`` is known to be: ``new_zeros`` (``new_ones``,
``new_full``, ``new_empty``, ``new_tensor``) is a method only tensors have among the values code
usually holds. Its receiver is often of a kind the analysis cannot tell (fairseq's AdaptiveSoftmax
calls it on the output of a head picked at construction between a user module and
``nn.Linear``); the buffer was then of unknown kind, so the write of a value requiring grad into
it (``buf[:, :3] = log_softmax(h)``) did not make it require grad, and the LogSoftmax output of a
slice of it, shifted in place with ``add_``, was only a possible hazard. Look-alikes (the write
under no_grad, of a detached value; a receiver of a class of the file with its own ``new_zeros``)
stay unproven; every program is run with torch."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import proven, raises_inplace, run_program  # noqa: E402

_PROGRAM = """import torch


def main():
    torch.manual_seed(0)
    w = torch.randn(3, 4, requires_grad=True)
    batch = {{"x": torch.randn(2, 4)}}
    x = batch["x"]
    buf = x.{made}
    {write}
    tail = buf[:, 1:4]
    out = torch.log_softmax(tail, 1).add_(1.0)
    (out.sum() + w.sum()).backward()
    return w.grad
"""


def _source(write: str, made: str = "new_zeros(2, 5)") -> str:
    return _PROGRAM.format(write=write.replace("\n", "\n    "), made=made)


def _line(source: str) -> int:
    """The line of the in-place ``add_`` on the LogSoftmax output."""
    return next(i for i, text in enumerate(source.splitlines(), 1) if ".add_(1.0)" in text)


@pytest.mark.parametrize("made", ["new_zeros(2, 5)", "new_ones(2, 5)", "new_full((2, 5), 0.5)", "new_empty(2, 5)",
                                  "new_tensor([[0.0] * 5] * 2)"])
def test_a_fresh_like_tensor_written_with_what_requires_grad_requires_grad(made):
    source = _source("buf[:, :3] = torch.log_softmax(x @ w.t(), 1)", made)
    assert raises_inplace(source)
    assert ("IPF103", _line(source)) in proven(source)


@pytest.mark.parametrize("write", [
    "with torch.no_grad():\n    buf[:, :3] = torch.log_softmax(x @ w.t(), 1)",  # grad off: nothing recorded
    "buf[:, :3] = torch.log_softmax(x @ w.t(), 1).detach()",  # nothing requiring grad written
])
def test_look_alikes_stay_unproven(write):
    source = _source(write)
    assert not raises_inplace(source)
    run_program(source)
    assert ("IPF103", _line(source)) not in proven(source)


def test_a_class_of_the_file_with_its_own_new_zeros_is_not_taken_for_a_tensor():
    source = _source("buf[:, :3] = torch.log_softmax(x @ w.t(), 1)").replace(
        "def main():",
        "class Rows:\n    def new_zeros(self, *size):\n        return torch.zeros(*size)\n\n\ndef main():")
    assert raises_inplace(source)  # (a tensor all the same here: the analysis cannot tell)
    assert ("IPF103", _line(source)) not in proven(source)
