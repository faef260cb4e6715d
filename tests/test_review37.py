"""Second read of stop 36's code on main (ec70a2c..af6aca4) and of stop 37's branches (review37):
soundness holes shown by running real torch.

Each program works where it is run (under ``torch.no_grad()``, or backward runs); the default
``fix`` must leave what it computes bit-identical, and the runtime's verdict must not call two
different results the same. Each test failed first on main (af6aca4), or on the branch named at
it (a conditional strict xfail there), or, for a guard whose own test could not fail, with that
guard removed (said at the test)."""

from __future__ import annotations

import pytest
import torch

from tests.programs import fixed_source, run_program


def _same_or_fails(source: str) -> None:
    """The default fix (every project file seen) leaves ``main()``'s tensors bit-identical in
    value and dtype, or leaves the program unchanged; the fixed program must not fail."""
    fixed = fixed_source(source, project=True)
    want = run_program(source)
    try:
        got = run_program(fixed)
    except Exception as error:  # noqa: BLE001 - the fix broke a working program
        pytest.fail(f"the safe fix broke a working program ({error}):\n{fixed}")
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and torch.equal(g, w), f"the safe fix changed a working program:\n{fixed}"


# ------------------------------------------------ twins whose result is not the receiver's
# `gate.gt_(0.5)` writes the comparison into `gate` in its own dtype (a float mask: 0./1.);
# `gate.gt(0.5)` is a bool tensor, on which `1 - gate` raises and `.mean()` refuses, and
# `probs.bernoulli_()` draws with p=0.5 where `probs.bernoulli()` draws with p=probs. The
# forward works under no_grad (evaluation); in training the sigmoid's saved output is written.
GATE = """\
import torch


def gate_mix(s, a, b):
    gate = torch.sigmoid(s).gt_(0.5)
    return gate * a + (1 - gate) * b


def gate_mix_named(s, a, b):
    gate = torch.sigmoid(s)
    gate.gt_(0.5)
    return gate * a + (1 - gate) * b


def train(s, a, b):
    return (gate_mix(s, a, b) + gate_mix_named(s, a, b)).sum()


def main():
    s = torch.randn(400) * 3
    a, b = torch.randn(400), torch.randn(400)
    with torch.no_grad():
        return [gate_mix(s, a, b), gate_mix_named(s, a, b)]
"""

COIN = """\
import torch


def coin(s):
    draw = torch.sigmoid(s).bernoulli_()
    return draw


def coin_named(s):
    draw = torch.sigmoid(s)
    draw.bernoulli_()
    return draw


def train(s):
    return (coin(s) + coin_named(s)).sum()


def main():
    s = torch.randn(400) * 3
    with torch.no_grad():
        torch.manual_seed(1)
        out = [coin(s)]
        torch.manual_seed(1)
        return out + [coin_named(s)]
"""


def test_twin_of_an_in_place_comparison_is_no_safe_fix():
    _same_or_fails(GATE)


def test_twin_of_bernoulli_without_p_is_no_safe_fix():
    _same_or_fails(COIN)


# ------------------------------------------------ the tolerance at a tensor's scale
# `scores.masked_fill(mask, -1e9)` (or `torch.finfo(dtype).min`, as transformers libraries write
# it) puts a constant of magnitude 1e9 (3.4e38) into the tensor beside values of magnitude ~1:
# the tolerance `rtol * scale` is then 1e4 (3.4e33) and any change of the unmasked entries, a
# sign, a factor 2, passed as "the same". Both runs write the constant bit for bit: it says
# nothing about the rounding of the entries that differ.
@pytest.mark.parametrize("fill", [-1e9, torch.finfo(torch.float32).min])
def test_a_masked_fill_constant_does_not_widen_the_tolerance_of_the_other_entries(fill):
    from codemod.runtime.compare import Tolerance, compare_tensors

    g = torch.Generator().manual_seed(0)
    scores = torch.randn(4, 6, 6, generator=g)
    causal = torch.ones(6, 6, dtype=torch.bool).triu(1)
    ref = scores.masked_fill(causal, fill)
    for changed in (-scores, scores * 2, scores + 0.1):
        found = []
        compare_tensors(ref, changed.masked_fill(causal, fill), "logits", Tolerance(), found)
        assert found, "a real change beside a masked constant passed as the same"
    noise = ref.clone()
    noise[~causal.expand_as(ref)] *= 1 + 1e-7  # rounding: still no difference
    found = []
    compare_tensors(ref, noise, "logits", Tolerance(), found)
    assert found == []


# ------------------------------------------------ held numbers (753a4e0)
# `self.num_quantizers = num_quantizers`, the argument's default an int: the rule took the
# attribute for a number that cannot require grad. A default is no type: this file builds the
# layer with a shift that requires grad, the positions then require grad, and PyTorch refuses the
# write into a view of them (the program raises); the check said nothing at all.
def _held_passed_a_tensor() -> str:
    from tests.test_real36 import HELD

    return HELD + """

def build():
    return RelativeBias(4, torch.tensor(2.0, requires_grad=True))
"""


def test_a_held_number_passed_a_tensor_that_requires_grad_raises():
    from tests.test_real36 import _defined, _view_write_raises

    def go():
        module = _defined(_held_passed_a_tensor(), pytest.MonkeyPatch())["build"]()
        module(torch.randn(3, requires_grad=True), 3, 3).sum().backward()

    assert _view_write_raises(go)


def test_an_int_default_is_no_held_number_where_a_call_passes_a_tensor():
    from tests.test_real36 import HELD_WRITES, _proven

    assert ("IPF106", HELD_WRITES[0]) in _proven(_held_passed_a_tensor())


def test_an_int_default_stays_a_held_number_where_every_call_passes_a_number():
    from tests.test_real36 import HELD, HELD_WRITES, _proven

    source = HELD + "\n\ndef build():\n    return RelativeBias(4, 3), RelativeBias(4)\n"
    assert not [f for f in _proven(source) if f[1] in HELD_WRITES]


# ------------------------------------------------ a nested function hands the tensor out
# `stored_before` skips the loads of a nested function ("it reads the name, not the tensor: it
# sees the rebinding"); but a nested function called before the write returns the tensor itself:
# `keep = grab()` holds the object `h += 1` writes, and `h = h + 1` leaves keep the old values.
CLOSURE = """\
import torch


def compute(w):
    h = torch.sigmoid(w)

    def grab():
        return h

    keep = grab()
    h += 1
    return h, keep


def compute_lambda(w):
    h = torch.sigmoid(w)
    grab = lambda: h
    keep = grab()
    h += 1
    return h, keep


def train(w):
    h, keep = compute(w)
    g, kept = compute_lambda(w)
    return (h * keep + g * kept).sum()


def main():
    w = torch.randn(3)
    with torch.no_grad():
        return [*compute(w), *compute_lambda(w)]
"""


def test_a_nested_function_returning_the_tensor_before_the_write_holds_it():
    _same_or_fails(CLOSURE)


def test_a_nested_function_that_only_reads_the_values_leaves_the_fix_safe():
    source = CLOSURE.replace("        return h\n", "        return h.sum()\n").replace("lambda: h", "lambda: h * 2")
    fixed = fixed_source(source, project=True)
    assert fixed.count("h = h + 1") == 2, fixed
    _same_or_fails(source)


# ------------------------------------------------ a forward that clones a grad-requiring input
# `if feats.requires_grad: feats = feats.clone()` before `feats *= 0.5`: the write never meets
# the caller's leaf (on the path where the input is not cloned, it requires no grad). The caller
# hands it a leaf that requires grad and the program runs; the check proves "the caller's tensor
# is a leaf that requires grad" from the parameter's binding alone, path-blind.
GUARDED_FORWARD = """\
import torch
import torch.nn as nn


class Scaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(3, 1)

    def forward(self, feats):
        if feats.requires_grad:
            feats = feats.clone()
        feats *= 0.5
        return self.head(feats)


def main():
    torch.manual_seed(0)
    model = Scaler()
    inp = INPUT
    out = model(inp)
    out.sum().backward()
    return [out.detach(), model.head.weight.grad, inp.grad]
"""


def _proven_in_project(source: str):
    from codemod.config import Settings
    from tests.programs import process_in_project

    result = process_in_project(source, Settings())
    return [(f.code, f.span.line) for f in result.findings if f.code.startswith("IPF1")]


def test_a_forward_that_clones_an_input_requiring_grad_is_not_proven():
    source = GUARDED_FORWARD.replace("INPUT", "torch.randn(4, 3, requires_grad=True)")
    run_program(source)  # runs: backward and all
    assert not _proven_in_project(source)


def test_a_forward_that_clones_an_input_made_a_leaf_by_requires_grad_is_not_proven():
    source = GUARDED_FORWARD.replace("INPUT", "torch.randn(4, 3).requires_grad_()")
    run_program(source)
    assert not _proven_in_project(source)


# ------------------------------------------------ rec24l: the first member of an nn.Sequential
# rec24l (bf329fb) hands a Sequential's input to its first member's forward. A first member
# replaced after the chain is built (`self.body[0] = PlainBlock(c)` in __init__, `unit.body[0] =
# ...` from outside, `insert(0, conv)`) no longer runs: the in-place ReLU never meets the saved
# input, the program runs, and the hazard is still proven at the ReLU's construction.
SEQUENTIAL_FIRST = """\
import torch
import torch.nn as nn


class PreActBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.act = nn.ReLU(inplace=True)
        self.conv = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x):
        x = self.act(x)
        return self.conv(x)


class PlainBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x):
        return self.conv(x)


class Unit(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.skip = nn.Conv2d(c, c, 1)
        self.body = nn.Sequential(PreActBlock(c), nn.BatchNorm2d(c))
REPLACED_IN_INIT
    def forward(self, x):
        identity = self.skip(x)
        return self.body(x) + identity


def main():
    torch.manual_seed(0)
    stem = nn.Conv2d(3, 4, 3, padding=1)
    unit = Unit(4)
REPLACED_OUTSIDE
    out = unit(stem(torch.randn(2, 3, 6, 6)))
    out.pow(2).mean().backward()
    return [stem.weight.grad] + [p.grad for p in unit.parameters()]
"""
FIRST_REPLACED = {
    "in-init": ("        self.body[0] = PlainBlock(c)\n", ""),
    "from-outside": ("", "    unit.body[0] = PlainBlock(4)\n"),
    "insert-first": ("        self.body.insert(0, nn.Conv2d(c, c, 1))\n", ""),
}


@pytest.mark.parametrize("way", sorted(FIRST_REPLACED))
def test_a_sequential_whose_first_member_was_replaced_is_not_proven(way):
    in_init, outside = FIRST_REPLACED[way]
    source = SEQUENTIAL_FIRST.replace("REPLACED_IN_INIT\n", in_init + "\n").replace("REPLACED_OUTSIDE\n", outside)
    run_program(source)  # runs: the replaced block's ReLU never meets the saved input
    assert not _proven_in_project(source), _proven_in_project(source)


# ------------------------------------------------ a test that could not fail (fix24d)
# test_fix24d_temporary_receiver's "keeps-its-output" control calls the module only under
# torch.no_grad(): nothing is reported there, so it stays unfixed with or without
# fresh_temporary's `result_kept` check (removing that check passes the whole file). Here the
# write is reported (a trained forward), and the module keeps what it returns in a list, a dict,
# a global list, through a helper: the twin would leave the kept tensor unscaled.
KEPT_OUTPUT = """\
import torch
import torch.nn as nn

CACHE = []


def remember(t):
    CACHE.append(t)
    return t


class Branch(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.feats = []
        self.store = {}

    def forward(self, x):
        out = torch.relu(self.fc(x))
KEEP
        return out


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.branch = Branch()

    def forward(self, x):
        fea = self.branch(x).mul_(2.0)
        return fea.sum()


def main():
    torch.manual_seed(0)
    net = Net()
    with torch.no_grad():
        out = net(torch.randn(3, 4))
    kept = net.branch.feats + list(net.branch.store.values()) + CACHE
    return [out, *kept]
"""
KEEPS = {
    "list-append": "        self.feats.append(out)",
    "dict-store": "        self.store['last'] = out",
    "global-list": "        CACHE.append(out)",
    "helper": "        remember(out)",
}


@pytest.mark.parametrize("keep", sorted(KEEPS))
def test_a_module_keeping_its_output_leaves_the_temporary_unfixed(keep):
    source = KEPT_OUTPUT.replace("KEEP", KEEPS[keep])
    assert _proven_in_project(source)  # the write is reported: the fix is really judged
    _same_or_fails(source)


# ------------------------------------------------ a test that could not fail (fix24d, finally)
# test_fix24d_method_inputs' finally case stays unsafe for other reasons: with `_before_a_finally`
# answering False everywhere its whole file passes. The plainest form: the write in a `finally`
# after `return h` reaches the tensor the caller got.
RETURN_THEN_FINALLY = """\
import torch


def scaled(z):
    h = torch.sigmoid(z)
    try:
        return h
    finally:
        h *= 2


def train(z):
    return scaled(z).sum()


def main():
    z = torch.randn(3)
    with torch.no_grad():
        return [scaled(z)]
"""


def test_a_write_in_a_finally_after_the_return_is_seen_by_the_caller():
    _same_or_fails(RETURN_THEN_FINALLY)
