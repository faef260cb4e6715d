"""Stop 56 (prec56b): false groups of the proven tier seen by fresh55 (bench/hazard_checks24/fresh55_probes.py),
each a program that runs backward without the in-place error and must not be proven, beside look-alikes that
raise and stay proven:

- non-differentiable-sink, the ``.detach()`` form (recstudio irgan.py:137/:139): the op that saved the tensor
  hands its result back into that tensor (``imp.scatter_(1, pos, imp.gather(1, pos) + c)``), and what the tensor
  feeds leaves only ``.detach()``ed (or ``.detach().cpu().numpy()``, ``.detach().tolist()``) or as the integer
  sample of ``torch.multinomial``: no backward reaches the saving op's node;
- attribute-index-read-as-view (recstudio sampler.py:273/:425): ``self.cp = norm[self.indices]`` with an index of
  unknown kind is a view only if that index is basic (an int, a slice, None, Ellipsis); a tensor index copies.
  Unknown is not yes: such a view is possible at most. A known basic index keeps it proven;
- requires-grad-guard, the ``assert`` form (caloutils scaling.py:26): ``assert not a.requires_grad`` opens the
  function; the write after it is reached only where ``a`` (and what is made of it) carries no grad. Under
  ``python -O`` the assert is stripped and the write raises: possible, not proven.
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.config import Settings  # noqa: E402
from tests.programs import process_in_project, proven_lines  # noqa: E402
from tests.programs import raises_proven as _real, runs_unproven as _safe  # noqa: E402


def _possible_lines(source: str) -> set:
    result = process_in_project(source, Settings(select=("IPF",)))
    return {f.span.line for f in result.findings if f.code.startswith("IPF2")}


# ---------------------------------------------------------------- the `.detach()` form (IRGAN)
SAMPLE = '''\
import torch


def sample(logit, pos):
    prob = logit.softmax(dim=-1)
    imp = prob * 0.8
    imp.scatter_(1, pos, imp.gather(1, pos) + 0.2)  # MARK
    SINK


def main():
    logit = torch.randn(4, 6, requires_grad=True)
    pos = torch.randint(0, 6, (4, 2))
    w, p = sample(logit, pos)
    (w * p).sum().backward()
'''

DETACHED = [
    "neg = torch.multinomial(imp, 3, replacement=True)\n"
    "    weight = prob.gather(1, neg) / imp.gather(1, neg)\n    return weight.detach(), prob.gather(1, neg)",
    "neg = imp.multinomial(3, replacement=True)\n"
    "    weight = prob.gather(1, neg) / imp.gather(1, neg)\n    return weight.detach(), prob.gather(1, neg)",
    "neg = torch.multinomial(imp, 3)\n    weight = imp.gather(1, neg)\n"
    "    return torch.from_numpy(weight.detach().cpu().numpy()), prob.gather(1, neg)",
    "neg = torch.multinomial(imp, 3)\n    return torch.tensor(imp.detach().tolist()).gather(1, neg), prob.gather(1, neg)",
    "neg = torch.multinomial(imp, 3)\n    w = (imp * 2).detach().gather(1, neg)\n    return w, prob.gather(1, neg)",
]


@pytest.mark.parametrize("sink", DETACHED)
def test_written_tensor_leaving_only_detached_or_sampled_is_not_proven(sink):
    _safe(SAMPLE.replace("SINK", sink))


def test_the_irgan_shape_is_not_proven():
    """Both writes of recstudio's IRGAN generator: the scatter_ after the gather, then ``[:, 0] = 0.0``."""
    src = SAMPLE.replace("+ 0.2)  # MARK", "+ 0.2)  # MARK\n    imp[:, 0] = 0.0  # MARK").replace(
        "SINK", DETACHED[0])
    _safe(src)


@pytest.mark.parametrize("sink", [
    # the weight handed back undetached
    "neg = torch.multinomial(imp, 3, replacement=True)\n"
    "    weight = prob.gather(1, neg) / imp.gather(1, neg)\n    return weight, prob.gather(1, neg)",
    # the written tensor handed back
    "neg = torch.multinomial(imp, 3)\n    return prob.gather(1, neg).detach(), imp.sum()",
    # detached once, used with its history too
    "w = imp.detach()\n    return w, imp * 2",
    # a sample that keeps a backward node (bernoulli: zero gradient, but the graph runs through it)
    "s = torch.bernoulli(imp)\n    return s, prob",
    # multinomial of it, but its values multiplied in
    "neg = torch.multinomial(imp, 3)\n    return imp.gather(1, neg), prob.gather(1, neg)",
])
def test_written_tensor_that_keeps_its_history_stays_proven(sink):
    _real(SAMPLE.replace("SINK", sink))


MARGIN = '''\
import torch


def margin(output, label):
    probs = torch.exp(output)
    true = probs[label].clone()
    probs[label] = 0  # MARK
    return (true - probs[probs.argmax()])SINK


def main():
    output = torch.randn(5, requires_grad=True)
    m = margin(output, 2)
    (output.sum() * (m if torch.is_tensor(m) else 1.0)).backward()
'''


def test_saved_output_leaving_as_a_number_is_not_proven():
    """prec51b's item-return probe: the value handed back is a Python number (``.item()``)."""
    _safe(MARGIN.replace("SINK", ".item()"))


def test_saved_output_handed_back_stays_proven():
    _real(MARGIN.replace("SINK", ""))


def test_written_parameter_keeps_it_proven():
    """The in-place method writes a tensor the caller holds (a parameter): the caller's backward reaches it."""
    src = SAMPLE.replace("def sample(logit, pos):\n    prob = logit.softmax(dim=-1)\n    imp = prob * 0.8\n",
                         "def sample(imp, pos):\n").replace(
        "SINK", "return torch.multinomial(imp.detach(), 3)").replace(
        "    w, p = sample(logit, pos)\n    (w * p).sum().backward()",
        "    imp = logit.softmax(dim=-1) * 0.8\n    sample(imp, pos)\n    imp.sum().backward()")
    _real(src)


# the boxes of lightnet's brambox transform, made in the function (the shipped method writes a parameter)
BOXES = '''\
import torch


def to_frame(out):
    boxes = torch.cat([out, out])
    sin = boxes[:, 5].sin()
    boxes[:, 1] += -sin  # MARK
    SINK


def main():
    out = torch.randn(4, 7, requires_grad=True)
    r = to_frame(out)
    (out * torch.as_tensor(r).sum()).sum().backward()
'''


def test_written_boxes_leaving_as_numpy_are_not_proven():
    _safe(BOXES.replace("SINK", "return boxes.detach().cpu().numpy()"))


def test_written_boxes_handed_back_stay_proven():
    _real(BOXES.replace("SINK", "return boxes").replace("torch.as_tensor(r).sum()", "r.sum()"))


# ---------------------------------------------------------------- attribute-index-read-as-view (recstudio)
SAMPLER = '''\
import torch


class Sampler:
    def __init__(self, n):
        self.indices = INDEX

    def update(self, emb):
        norm = torch.exp(-0.5 * torch.sum(emb ** 2, dim=-1))
        self.p = norm
        self.cp = norm[self.indices]
        cumsum = self.cp[0:3].cumsum(0)
        self.cp[0:3] = cumsum / cumsum[-1]  # MARK
        return self.p.sum() + self.cp.sum()


def main():
    emb = torch.randn(5, 3, requires_grad=True)
    Sampler(5).update(emb).backward()
'''


@pytest.mark.parametrize("index", ["torch.randperm(n)", "torch.sort(torch.rand(n)).indices",
                                   "torch.arange(n).flip(0)"])
def test_attribute_index_of_unknown_kind_is_not_proven_a_view(index):
    src = SAMPLER.replace("INDEX", index)
    _safe(src)
    assert 13 in _possible_lines(src)  # (a view if the index were basic: possible)


def test_attribute_index_a_subclass_sets_to_a_tensor_is_not_proven():
    src = SAMPLER.replace("INDEX", "slice(0, n)").replace("\n\ndef main():", """

class Permuted(Sampler):
    def __init__(self, n):
        self.indices = torch.randperm(n)


def main():""").replace("Sampler(5).update", "Permuted(5).update")
    _safe(src)


def test_attribute_index_another_class_sets_to_a_tensor_stays_proven():
    src = SAMPLER.replace("INDEX", "slice(0, n)").replace("\n\ndef main():", """

class Other:
    def __init__(self, n):
        self.indices = torch.randperm(n)


def main():""")
    _real(src)


PARAM_INDEX = '''\
import torch


def update(emb, idx):
    norm = torch.exp(-0.5 * torch.sum(emb ** 2, dim=-1))
    cp = norm[idx]
    cp[0:3] = 0.0  # MARK
    return norm.sum() + cp.sum()


def main():
    emb = torch.randn(5, 3, requires_grad=True)
    update(emb, torch.randperm(5)).backward()
'''


def test_parameter_index_of_unknown_kind_is_not_proven_a_view():
    _safe(PARAM_INDEX)


@pytest.mark.parametrize("index", ["slice(0, n)", "slice(None)", "Ellipsis", "(slice(0, n),)"])
def test_attribute_index_known_basic_stays_proven(index):
    _real(SAMPLER.replace("INDEX", index))


@pytest.mark.parametrize("index, call", [
    ("idx: int", "update(emb, 1)"),
    ("idx: slice", "update(emb, slice(0, 5))"),
])
def test_parameter_index_annotated_basic_stays_proven(index, call):
    src = PARAM_INDEX.replace("def update(emb, idx)", f"def update(emb, {index})").replace(
        "update(emb, torch.randperm(5))", call).replace("cp[0:3] = 0.0", "cp[...] = 0.0")
    _real(src)


@pytest.mark.parametrize("index", ["0:n", "n - 3:", ":, None", "...", "k", "k:", "int(k)", "len(emb) - 1",
                                   "emb.shape[0] - 1", "emb.size(0) - 1"])
def test_local_basic_index_stays_proven(index):
    src = PARAM_INDEX.replace("def update(emb, idx)", "def update(emb)").replace(
        "update(emb, torch.randperm(5))", "update(emb)").replace(
        "    cp = norm[idx]", f"    n = emb.shape[0]\n    k = 1\n    cp = norm[{index}]").replace(
        "cp[0:3] = 0.0", "cp[...] = 0.0")
    _real(src)


def test_loop_range_index_stays_proven():
    src = PARAM_INDEX.replace("def update(emb, idx)", "def update(emb)").replace(
        "update(emb, torch.randperm(5))", "update(emb)").replace(
        "    cp = norm[idx]\n    cp[0:3] = 0.0  # MARK\n    return norm.sum() + cp.sum()",
        "    out = norm.sum()\n    for i in range(2):\n        cp = norm[i]\n        cp.zero_()  # MARK\n"
        "        out = out + cp\n    return out")
    _real(src)


# ---------------------------------------------------------------- requires-grad-guard, the `assert` form
SCALE = '''\
import torch


def scale(a: torch.Tensor, b: torch.Tensor):
    GUARD
    std = a.std()
    if std < 1e-3:
        std += 1e-6  # MARK
    return (b - a.mean()) / std


def main():
    a = torch.rand(5) * 1e-4
    b = torch.randn(5, requires_grad=True)
    run = globals()["scale"]  # (a caller the analysis does not see: a library's entry point)
    run(a, b).sum().backward()
'''


@pytest.mark.parametrize("guard", ["assert not a.requires_grad", "assert not a.requires_grad, 'a: data'",
                                   "assert not a.requires_grad and a.dim() == 1"])
def test_assert_guard_is_not_proven_but_possible(guard):
    src = SCALE.replace("GUARD", guard)
    _safe(src)
    assert 8 in _possible_lines(src)  # (under python -O the assert is gone: it raises for `a` that requires grad)


def test_assert_guard_control_raises_and_stays_proven():
    src = SCALE.replace("GUARD", "pass").replace("torch.rand(5) * 1e-4", "(torch.rand(5) * 1e-4).requires_grad_()")
    _real(src)


@pytest.mark.parametrize("guard", [
    "assert a.requires_grad or True",  # promises nothing
    "assert not b.requires_grad if False else True",  # a conditional expression: not a guard
])
def test_assert_that_promises_nothing_keeps_it_proven(guard):
    src = SCALE.replace("GUARD", guard).replace("torch.rand(5) * 1e-4", "(torch.rand(5) * 1e-4).requires_grad_()")
    _real(src)


def test_assert_caught_keeps_it_proven():
    src = SCALE.replace("    GUARD\n", "    try:\n        assert not a.requires_grad\n    except AssertionError:\n        pass\n").replace(
        "torch.rand(5) * 1e-4", "(torch.rand(5) * 1e-4).requires_grad_()")
    _real(src)


def test_assert_of_a_rebound_name_keeps_it_proven():
    src = SCALE.replace("GUARD", "assert not a.requires_grad\n    a = a * b").replace(
        "torch.rand(5) * 1e-4", "torch.rand(5) * 1e-4 + torch.zeros(5)")
    _real(src)


def test_assert_after_the_write_keeps_it_proven():
    src = SCALE.replace("    GUARD\n", "").replace(
        "    return (b - a.mean()) / std", "    out = (b - a.mean()) / std\n    assert not b.requires_grad or True\n"
        "    return out").replace("torch.rand(5) * 1e-4", "(torch.rand(5) * 1e-4).requires_grad_()")
    _real(src)


def test_assert_in_a_branch_keeps_the_other_branch_proven():
    src = SCALE.replace("    GUARD\n", "").replace(
        "    if std < 1e-3:\n        std += 1e-6  # MARK",
        "    if a.sum() < 0:\n        assert not a.requires_grad\n    if std < 1e-3:\n        std += 1e-6  # MARK").replace(
        "torch.rand(5) * 1e-4", "(torch.rand(5) * 1e-4).requires_grad_()")
    _real(src)


CHAIN = '''\
import torch

PARENTS = [0, 0, 1]


class Chain:
    def __init__(self):
        self.parent = PARENTS

    def run(self, g_):
        g = torch.cat([g_, torch.zeros(2, 1, 3, 3)], dim=1)
        for i in range(1, 3):
            g[:, i] = torch.matmul(g[:, self.parent[i - 1]], g_[:, i])  # MARK
        return g


def main():
    g_ = torch.randn(2, 3, 3, 3, requires_grad=True)
    Chain().run(g_).sum().backward()
'''


def test_index_from_a_list_of_ints_stays_proven():
    """GraphCMR's kinematic chain (dev bench set6/307): ``self.parent[i - 1]`` of a module-level list of int
    literals is an int: ``g[:, self.parent[i - 1]]`` a view of ``g``, which matmul saved."""
    _real(CHAIN)


def test_index_from_a_list_something_writes_is_not_proven_a_view():
    src = CHAIN.replace("        self.parent = PARENTS\n",
                        "        self.parent = PARENTS\n        self.parent[0] = torch.tensor([0, 0])\n")
    assert 14 not in proven_lines(src)  # (the write, a line down: possible at most)
    assert 14 in _possible_lines(src)
