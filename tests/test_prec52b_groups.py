"""Stop 52 (prec52b): four false groups of the proven tier that fresh52 found on never-measured
code (bench/hazard_checks24/prec52_probes.py), each a program that runs backward without the
in-place error and must not be proven, beside look-alikes that raise and stay proven:

- min-index-only (rl4co): a written op output whose only use is the index half of a ranking,
  ``d.min(-1)[1]``, ``d.topk(2)[1]``, ``_, i = d.max(-1)``, ``torch.sort(d)[1]``: int64, no
  history, so backward never reaches the op that saved it. The values half (``[0]``,
  ``.values``, an unpacked values name used) carries grad and stays proven; so does
  ``d.max(other)[1]`` (the elementwise max of two tensors: ``[1]`` is a row of it);
- frozen-parameter-attribute (torchkeras): ``self.d = nn.Parameter(t, requires_grad=False)``
  (or ``(t, False)``, or ``self.d.requires_grad_(False)`` after it) requires no grad, so
  ``b * self.d`` saves nothing of ``b`` for d's gradient;
- isinstance-list-arm (colossalai): a write in the arm where ``isinstance(buf, torch.Tensor)``
  was false (``else:``, ``if not ...:``, ``torch.is_tensor``) writes an item of a list;
- data-assignment-sink (graph-pes): ``self.scales.data = std`` takes the storage, not the
  history (and ``torch.isnan(std)`` gives booleans): backward never reaches std.
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")



from tests.programs import marked as _marked, proven_lines as _proven_lines  # noqa: E402
from tests.programs import raises_proven as _real, runs_unproven as _safe  # noqa: E402


# ---------------------------------------------------------------- min-index-only
RANKED = '''\
import torch


def pick(c):
    d = (c - 1).norm(p=2, dim=1)
    d[d > 100] = 1e5  # MARK
    USE
    return i


def main():
    c = torch.rand(4, 6, 3, requires_grad=True)
    i = pick(c)
    ((c * 2).sum() + i.float().sum()).backward()
    return c.grad
'''

INDEX_ONLY = [
    "i = d.min(-1)[1]",
    "i = d.max(-1)[1]",
    "i = d.min(1)[-1]",
    "i = d.topk(2)[1]",
    "i = d.sort()[1]",
    "i = d.sort(dim=-1, descending=True)[1]",
    "_, i = d.min(-1)",
    "_, i = d.max(-1)",
    "v, i = d.topk(2)",
    "i = d.min(dim=-1).indices",
    "i = torch.min(d, -1)[1]",
    "i = torch.topk(d, 2)[1]",
    "_, i = torch.sort(d, descending=True)",
    "i = torch.max(d, dim=1).indices",
    "i = torch.isnan(d).long()",
]

VALUES_USED = [
    "i = d.min(-1)[0]",
    "i = d.max(-1).values",
    "i = d.topk(2)[0]",
    "i = d.sort()[0]",
    "v, i = d.min(-1)\n    i = v + i",
    "i = torch.max(d, dim=1)[0]",
    "i = torch.sort(d)[0]",
    "i = d.max(d.flip(0))[1]",
    "i = d.min()",
]


@pytest.mark.parametrize("use", INDEX_ONLY)
def test_only_the_indices_of_a_ranking_leave_is_not_proven(use):
    _safe(RANKED.replace("USE", use))


@pytest.mark.parametrize("use", VALUES_USED)
def test_the_values_of_a_ranking_used_raise_and_stay_proven(use):
    _real(RANKED.replace("USE", use))


TWO_ARMS = '''\
import torch


def pick(c, greedy):
    if greedy:
        d = (c - 1).norm(p=2, dim=1)
        d.scatter_(1, torch.zeros(4, 1, dtype=torch.long), 1e6)  # MARK
        d[d > 100] = 1e5  # MARK
        i = d.min(-1)[1]
    else:
        d = torch.ones(4, 3)
        d[:, 0] = -1e20
        d = torch.softmax(d, -1)
        i = d.multinomial(1).view(-1)
    return i


def main():
    c = torch.rand(4, 6, 3, requires_grad=True)
    i = pick(c, True)
    ((c * 2).sum() + i.float().sum()).backward()
    return c.grad
'''


def test_reads_of_another_arms_binding_are_not_uses_of_the_written_output():
    """rl4co pdp/generator.py:131/132: the other arm binds `d` anew and reads its values; those
    reads hold another tensor, so the greedy arm's norm output still leaves only as indices."""
    _safe(TWO_ARMS)


def test_a_read_both_bindings_reach_still_counts():
    source = TWO_ARMS.replace("    return i\n", "    return i, d.sum()\n", 1).replace(
        "    i = pick(c, True)\n    ((c * 2).sum() + i.float().sum()).backward()",
        "    i, s = pick(c, True)\n    (s + i.float().sum()).backward()")
    _real(source)


REBOUND_TO_ITSELF = '''\
import torch


def quantize(enc, w, training):
    if training:
        soft = torch.nn.functional.gumbel_softmax(enc, tau=1.0, hard=True, dim=1)
    else:
        soft = torch.softmax(enc, dim=1)
        soft = soft.scatter_(1, torch.argmax(soft, dim=1).unsqueeze(1), 1)  # MARK
    ids = torch.argmax(soft, dim=1)
    return ids, torch.einsum("bd,dn->bn", soft, w)


def main():
    enc = torch.randn(4, 5, requires_grad=True)
    w = torch.randn(5, 3, requires_grad=True)
    ids, out = quantize(enc * 1, w, False)
    out.sum().backward()
    return enc.grad
'''


def test_a_name_bound_again_to_the_written_tensor_still_carries_it():
    """dev case set14/720 (dall-e-baby): `soft = soft.scatter_(...)` binds the name again to the
    same tensor; the einsum after the `if` reads it through that binding, so it stays a use."""
    _real(REBOUND_TO_ITSELF)


# ---------------------------------------------------------------- frozen-parameter-attribute
FROZEN = '''\
import torch
from torch import nn


class Post(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.d = nn.Parameter(d.unsqueeze(dim=0), requires_grad=False)
        self.s = 0.1

    def forward(self, b):
        b = b.permute(0, 2, 1)
        b[:, :, :2] = self.s * b[:, :, :2]
        b[:, :, :2] = b[:, :, :2] * self.d[:, :, 2:] + self.d[:, :, :2]  # MARK
        return b


def main():
    post = Post(torch.rand(5, 4))
    x = torch.randn(2, 4, 5, requires_grad=True)
    post(x * 1).sum().backward()
    return x.grad
'''
FROZEN_FORMS = {
    "keyword": FROZEN,
    "positional": FROZEN.replace("requires_grad=False)", "False)"),
    "switched-off": FROZEN.replace("requires_grad=False)\n",
                                   ")\n        self.d.requires_grad_(False)\n"),
    "switched-off-attribute": FROZEN.replace("requires_grad=False)\n",
                                             ")\n        self.d.requires_grad = False\n"),
}


@pytest.mark.parametrize("form", sorted(FROZEN_FORMS))
def test_a_product_with_a_frozen_parameter_attribute_is_not_proven(form):
    _safe(FROZEN_FORMS[form])


@pytest.mark.parametrize("made", ["nn.Parameter(d.unsqueeze(dim=0))", "nn.Parameter(d.unsqueeze(dim=0), True)",
                                  "nn.Parameter(d.unsqueeze(dim=0), requires_grad=True)"])
def test_a_product_with_a_trained_parameter_attribute_raises_and_stays_proven(made):
    _real(FROZEN.replace("nn.Parameter(d.unsqueeze(dim=0), requires_grad=False)", made))


# ---------------------------------------------------------------- isinstance-list-arm
LISTED = '''\
import torch


def make_buffer(shapes):
    if isinstance(shapes, torch.Size):
        return torch.empty(shapes, requires_grad=True)
    out = []
    for s in shapes:
        out.append(torch.zeros(s, requires_grad=True))
    return out


def recv(shapes):
    buf = make_buffer(shapes)
    if isinstance(buf, torch.Tensor):
        buf = buf.detach().view(-1).requires_grad_()
    else:
        for i in range(len(buf)):
            buf[i] = buf[i].detach().view(-1).requires_grad_()  # MARK
    return buf


def main():
    got = recv([torch.Size([2, 3]), torch.Size([4])])
    sum(t.sum() for t in got).backward()
    return [t.grad for t in got]
'''
NEGATED = LISTED.replace('''    if isinstance(buf, torch.Tensor):
        buf = buf.detach().view(-1).requires_grad_()
    else:
''', '''    if not isinstance(buf, (torch.Tensor, float)):
''')
IS_TENSOR = LISTED.replace("if isinstance(buf, torch.Tensor):", "if torch.is_tensor(buf):")
ELIF = LISTED.replace("    else:\n", "    elif len(buf) > 0:\n")


@pytest.mark.parametrize("source", [LISTED, NEGATED, IS_TENSOR, ELIF], ids=["else", "not", "is_tensor", "elif"])
def test_a_write_where_the_tensor_test_failed_is_not_proven(source):
    _safe(source)


TENSOR_ARM = '''\
import torch


def recv(shape):
    buf = torch.zeros(shape, requires_grad=True)
    if isinstance(buf, torch.Tensor):
        buf[0] = 1.0  # MARK
    else:
        for i in range(len(buf)):
            buf[i] = buf[i].detach().view(-1).requires_grad_()
    return buf


def main():
    return recv(torch.Size([2, 3]))
'''
NEGATED_TENSOR_ARM = TENSOR_ARM.replace('''    if isinstance(buf, torch.Tensor):
        buf[0] = 1.0  # MARK
    else:
        for i in range(len(buf)):
            buf[i] = buf[i].detach().view(-1).requires_grad_()
''', '''    if not isinstance(buf, torch.Tensor):
        buf = [buf]
    else:
        buf[0] = 1.0  # MARK
''')


@pytest.mark.parametrize("source", [TENSOR_ARM, NEGATED_TENSOR_ARM], ids=["if", "not-else"])
def test_a_write_in_the_tensor_arm_raises_and_stays_proven(source):
    _real(source, message="leaf Variable that requires grad")


def test_a_name_bound_anew_in_the_failed_arm_raises_and_stays_proven():
    source = LISTED.replace('''        for i in range(len(buf)):
            buf[i] = buf[i].detach().view(-1).requires_grad_()  # MARK
''', '''        buf = torch.zeros(3, requires_grad=True)
        buf[0] = 1.0  # MARK
        buf = [buf]
''')
    _real(source, message="leaf Variable that requires grad")


# ---------------------------------------------------------------- data-assignment-sink
SCALED = '''\
import torch
from torch import nn


class Scaled(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.w = nn.Linear(3, n)
        self.shifts = nn.Parameter(torch.zeros(n))
        self.scales = nn.Parameter(torch.ones(n))

    def featurise(self, pos):
        return torch.cat([self.w(pos).tanh(), torch.ones(pos.size(0), 1)], dim=1)

    def pre_fit(self, pos):
        X = self.featurise(pos)
        _mean = X.mean(dim=0)
        _std = X.std(dim=0)
        _std[torch.isnan(_std) | (_std < 1e-6)] = 1  # MARK
        self.shifts.data = _mean
        self.scales.data = _std
        return _mean.sum()

    def forward(self, pos):
        return (self.featurise(pos) - self.shifts) / self.scales


def main():
    m = Scaled(4)
    pos = torch.randn(6, 3, requires_grad=True)
    loss = m.pre_fit(pos)
    (loss + m(pos).pow(2).sum()).backward()
    return pos.grad
'''


def test_a_tensor_leaving_only_as_data_is_not_proven():
    _safe(SCALED)


@pytest.mark.parametrize("also", ["return _mean.sum() + _std.sum()", "return (X / _std).sum()"])
def test_a_tensor_also_used_raises_and_stays_proven(also):
    _real(SCALED.replace("return _mean.sum()", also))
