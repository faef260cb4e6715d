"""What a caller hands a method it reaches through an instance another class holds: torch_two_sample's
``SmoothFRStatistic`` sets ``self.marginals_fn = TreeMarginals(n)`` and calls
``self.marginals_fn(self.marginals_fn.triu(-alpha * diffs))``; ``TreeMarginals.__call__(self, d)``
starts with ``d -= d.max()``, which writes into the tensor ``max`` saved. The parameter's kind was read
only from ``self.<name>(...)`` calls in the method's own class (and other files' calls), and the kind
of ``self.fn.triu(...)`` not at all, so ``d`` was no known tensor and the save unseen. Now a class of
the file held only as ``self.<a> = K(...)`` (``HeldInstances``) has its method calls through ``self.<a>``
read: ``self.<a>(x)`` runs ``K.__call__``, ``self.<a>.m(x)`` runs ``K.m`` (its returns give the kind), and
a method's parameter is a tensor where every such call (all of them seen: the instance read nowhere
else, handed nowhere) passes one. Every program is run with torch."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import raises_proven, runs_unproven  # noqa: E402

_PROGRAM = """import torch


class Marg:
    def __init__(self, n):
        self.mask = torch.ones(n, dtype=torch.bool)

    def triu(self, m):
        return torch.masked_select(m, self.mask)

    def __call__(self, d):
        d -= d.max()  # MARK
        return torch.exp(d)


class Stat:
    def __init__(self, n):
        self.fn = Marg(n)

    def __call__(self, x):
        {body}


def main():
    w = torch.randn(3, requires_grad=True)
    s = Stat(3)
    {use}
"""

_USE = "out = s(w)\n    (out + w.sum()).backward()\n    return w.grad"


def _program(body: str, use: str = _USE) -> str:
    return _PROGRAM.format(body=body.replace("\n", "\n        "), use=use)


@pytest.mark.parametrize("body", [
    "return self.fn(torch.tanh(x)).sum()",
    "return self.fn(self.fn.triu(-2 * x)).sum()",  # torch_two_sample's call
    "return self.fn(self.fn.triu(x * x)).sum() + self.fn(torch.sigmoid(x)).sum()",
])
def test_a_held_instances_call_hands_its_method_a_tensor(body):
    raises_proven(_program(body))


@pytest.mark.parametrize("body", [
    "return self.fn(torch.ones(3)).sum() + x.sum()",  # a constant: `max` saved nothing that requires grad
    "with torch.no_grad():\n    y = self.fn(torch.tanh(x))\nreturn (y * x).sum()",
])
def test_held_calls_that_record_no_graph_stay_unproven(body):
    runs_unproven(_program(body))


@pytest.mark.parametrize("taken", ["f = s.fn", "f = [s.fn][0]", "f = getattr(s, 'fn')"])
def test_an_instance_read_from_outside_leaves_its_calls_unseen(taken):
    # the calls the file shows never run; the instance is taken out and called on a numpy array,
    # where `d -= d.max()` is plain numpy. (A guard: with HeldInstances' reads of the instance
    # elsewhere ignored, `d` is read as a tensor, but the requires-grad side still proves nothing.)
    use = f"import numpy as np\n    {taken}\n    out = f(np.arange(3.0))\n    return float(out.sum())"
    source = _program("return self.fn(torch.tanh(x)).sum()", use).replace(
        "        return torch.exp(d)", "        return d * 2").replace(
        "        self.fn = Marg(n)\n", "        self.fn = Marg(n)\n\n    def unused(self):\n"
        "        return self.fn(torch.ones(3, requires_grad=True) * 2)\n")
    assert "    def unused(self):" in source
    runs_unproven(source)


_DATA_STEP = """import torch


class DataProcess:
    def __init__(self, boost):
        self.boost = boost

    def process_data(self, x):
        if self.boost:
            x /= torch.clamp(x.std(dim=1, keepdim=True), min=1e-4)  # MARK
        return x


class Solver:
    def __init__(self):
        self.model = torch.nn.Linear(4, 4)
        self.data_processor = DataProcess(boost=True)

    def run_step(self, batch: torch.Tensor):
        x = batch.to("cpu")
        sample = self.data_processor.process_data(x)
        return self.model(sample).pow(2).mean()


def main():
    solver = Solver()
    solver.run_step(torch.randn(3, 4)).backward()
    return solver.model.weight.grad
"""


def test_a_held_instances_other_method_stays_a_data_step():
    # audiocraft's DataProcess.process_data through `self.data_processor`: the batch requires no
    # grad, so `std` saved nothing. Only a held callable's `__call__` is read as a function's calls.
    runs_unproven(_DATA_STEP)
