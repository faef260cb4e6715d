"""Stop 38 (sound38s, issue 24): known soundness holes of the static side, each shown by a
program run with real torch. Each test failed first on main (7f29943), or was a strict xfail there;
each fixed group has negative controls: look-alikes that really fail stay proven."""

from __future__ import annotations

import pytest
import torch

from codemod.config import Settings
from tests.programs import fixed_source, raises_inplace, run_program


def _proven(source: str):
    from codemod.config import Settings
    from tests.programs import process_in_project

    result = process_in_project(source, Settings())
    return [(f.code, f.span.line) for f in result.findings if f.code.startswith("IPF1")]


# ------------------------------------------------ 1. a requires-grad guard before the write
# `if x.requires_grad: x = x.clone()` before `x *= 0.5`: where the caller's tensor itself
# reaches the write, it requires no grad (no leaf that requires grad, no output autograd saved).
# The caller hands a leaf that requires grad and the program runs, backward and all.
GUARDED = """\
import torch
import torch.nn as nn


class Scaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(3, 1)
        self.flag = False

    def forward(self, feats):
GUARD
        return self.head(feats)


def main():
    torch.manual_seed(0)
    model = Scaler()
    inp = INPUT
    out = model(inp)
    out.sum().backward()
    return [out.detach(), model.head.weight.grad, inp.grad]
"""
LEAF = "torch.randn(4, 3, requires_grad=True)"
SAFE_GUARDS = {
    "grad-mode-and": "        if torch.is_grad_enabled() and feats.requires_grad:\n"
                     "            feats = feats.clone()\n        feats *= 0.5\n",
    "write-in-else": "        if feats.requires_grad:\n            feats = feats.clone() * 0.5\n"
                     "        else:\n            feats *= 0.5\n",
    "detached-copy": "        if feats.requires_grad:\n            feats = feats.detach().clone()\n        feats *= 0.5\n",
    "in-a-with": "        if feats.requires_grad:\n            feats = feats.clone()\n"
                 "        with torch.autograd.profiler.record_function('scale'):\n            feats *= 0.5\n",
}
# Look-alikes whose guard does not cover the write: each raises, and stays proven.
UNSAFE_GUARDS = {
    "a-view-not-a-copy": "        if feats.requires_grad:\n            feats = feats.view(4, 3)\n        feats *= 0.5\n",
    "guard-on-training": "        if self.flag and feats.requires_grad:\n            feats = feats.clone()\n"
                         "        feats *= 0.5\n",
    "guard-inverted": "        if not feats.requires_grad:\n            feats = feats.clone()\n        feats *= 0.5\n",
    "write-before-guard": "        feats *= 0.5\n        if feats.requires_grad:\n            feats = feats.clone()\n",
    "guard-not-on-every-path": "        if self.flag:\n            if feats.requires_grad:\n"
                               "                feats = feats.clone()\n        feats *= 0.5\n",
    "alias-kept": "        kept = feats\n        if feats.requires_grad:\n            feats = feats.clone()\n"
                  "        kept *= 0.5\n",
}


def _guarded(guard: str) -> str:
    return GUARDED.replace("GUARD\n", guard).replace("INPUT", LEAF)


@pytest.mark.parametrize("way", sorted(SAFE_GUARDS))
def test_a_copy_made_where_the_input_requires_grad_covers_the_write(way):
    source = _guarded(SAFE_GUARDS[way])
    run_program(source)  # runs: backward and all
    assert not _proven(source), _proven(source)


@pytest.mark.parametrize("way", sorted(UNSAFE_GUARDS))
def test_a_guard_that_does_not_cover_the_write_stays_proven(way):
    source = _guarded(UNSAFE_GUARDS[way])
    assert raises_inplace(source, message=("leaf Variable", "is a view", "modified by an inplace")), source
    assert _proven(source), source


# ------------------------------------------------ 2. a Sequential's first member replaced afterwards
# `self.body = nn.Sequential(PreActBlock(c), ...)` hands the input to PreActBlock's forward,
# whose in-place ReLU writes the caller's tensor (saved by `self.skip`): the program raises. Any
# write of the first member after the chain is built (in another method, from outside, by
# setattr, add_module, through another name) leaves it unknown: the replaced chain runs.
CHAIN = """\
import torch
import torch.nn as nn


class PreActBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.act = nn.ReLU(inplace=True)
        self.conv = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x):
        return self.conv(self.act(x))


class Unit(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.skip = nn.Conv2d(c, c, 1)
        self.body = nn.Sequential(PreActBlock(c), nn.BatchNorm2d(c))
IN_INIT
    def simplify(self):
        pass
IN_METHOD
    def forward(self, x):
        identity = self.skip(x)
        return self.body(x) + identity


def main():
    torch.manual_seed(0)
    stem = nn.Conv2d(3, 4, 3, padding=1)
    unit = Unit(4)
OUTSIDE
    out = unit(stem(torch.randn(2, 3, 6, 6)))
    out.pow(2).mean().backward()
    return [stem.weight.grad] + [p.grad for p in unit.parameters()]
"""
REPLACES_FIRST = {
    "other-method": ("", "        self.body[0] = nn.Identity()\n", "    unit.simplify()\n"),
    "setattr": ("        setattr(self.body, '0', nn.Identity())\n", "", ""),
    "add-module-same-name": ("        self.body.add_module('0', nn.Identity())\n", "", ""),
    "through-another-name": ("", "", "    body = unit.body\n    body[0] = nn.Identity()\n"),
    "deleted": ("        del self.body[0]\n", "", ""),
    "modules-dict": ("        self.body._modules['0'] = nn.Identity()\n", "", ""),
    "chain-replaced-outside": ("", "", "    unit.body = nn.Sequential(nn.Identity(), nn.BatchNorm2d(4))\n"),
    "chain-replaced-in-method": ("", "        self.body = nn.Sequential(nn.Identity(), nn.BatchNorm2d(4))\n",
                                 "    unit.simplify()\n"),
}
# Writes that leave the first member as built: the program raises and the hazard stays proven.
KEEPS_FIRST = {
    "as-built": ("", "", ""),
    "second-replaced": ("        self.body[1] = nn.BatchNorm2d(c)\n", "", ""),
    "appended": ("        self.body.append(nn.Identity())\n", "", ""),
    "other-attribute-replaced": ("", "", "    unit.skip = nn.Conv2d(4, 4, 1)\n"),
}


def _chain(way) -> str:
    in_init, in_method, outside = way
    return CHAIN.replace("IN_INIT\n", in_init + "\n").replace("IN_METHOD\n", in_method + "\n") \
        .replace("OUTSIDE\n", outside)


@pytest.mark.parametrize("way", sorted(REPLACES_FIRST))
def test_a_chain_whose_first_member_may_be_replaced_is_not_proven(way):
    source = _chain(REPLACES_FIRST[way])
    run_program(source)  # runs: the in-place ReLU never meets the saved input
    assert not _proven(source), _proven(source)


@pytest.mark.parametrize("way", sorted(KEEPS_FIRST))
def test_a_chain_whose_first_member_stays_is_proven(way):
    source = _chain(KEEPS_FIRST[way])
    assert raises_inplace(source), source
    assert _proven(source), source


# ------------------------------------------------ 3. the unsafe tier's conditional-alias rebinding
# `loc = cumh if rev else cumw`, then a write through `loc` (or through `cumh`, which `loc` may
# be): both tensors are read after it. The unsafe tier rebound every name to one clone (`loc =
# cumh = cumw = loc.clone()`): the name the condition did not pick took the other's values, on
# every path (mig37 fixed the safe tier only). No rebinding says "the one the condition picked":
# no fix in any tier. Programs run with torch: the unsafe fix leaves every result equal.
PICKED = """\
import torch


def spline(w, rev):
    cumw = torch.sigmoid(w)
    cumh = torch.exp(w * 2)
    loc = cumh if rev else cumw
WRITE
    return cumw * 2 + cumh * 3 + loc.sum()


def train(w):
    return spline(w, True).sum() + spline(w, False).sum()


def main():
    w = torch.rand(3, 6)
    with torch.no_grad():
        return [spline(w, True), spline(w, False)]
"""
PICKED_WRITES = {
    "augmented": "    loc += 1e-6",
    "item": "    loc[..., -1] += 1e-6",
    "method": "    loc.add_(1e-6)",
    "write-into-a-branch": "    cumh[..., -1] += 1e-6",
}
UNSAFE = Settings(select=("ALL",), unsafe_fixes=True)


def _picked(way: str) -> str:
    return PICKED.replace("WRITE", PICKED_WRITES[way])


@pytest.mark.parametrize("way", sorted(PICKED_WRITES))
def test_a_conditional_alias_gets_no_rebinding_in_the_unsafe_tier(way):
    source = _picked(way)
    fixed = fixed_source(source, UNSAFE, project=True)
    got, want = run_program(fixed), run_program(source)
    assert all(torch.equal(g, w) for g, w in zip(got, want)), fixed
    assert "cumh = cumw" not in fixed and "cumw = cumh" not in fixed, fixed


def test_a_plain_alias_still_gets_the_unsafe_rebinding():
    source = PICKED.replace("cumh if rev else cumw", "cumh").replace("WRITE", "    loc += 1e-6")
    fixed = fixed_source(source, UNSAFE, project=True)
    assert "loc = cumh = loc + 1e-6" in fixed, fixed


# ------------------------------------------------ 4. `_escapes`'s lambda branch is live
# `codemod/rules/safety.py` `_escapes` answers "a lambda's value hands the tensor out". A lambda
# is no owner (`Tree.owner` knows functions and the module only), so `lambda: h` in the
# function's own body reaches `_escapes` from `stored_before` directly, not through
# `_handed_out_by_nested` (which checked the same case first, and now leaves it to `_escapes`);
# a lambda inside a nested function goes through `_handed_out_by_nested` to `_escapes`. Removing
# the branch makes both rewrites `h = h + 1`, leaving `keep` the old values.
LAMBDAS = """\
import torch


def own_level(w):
    h = torch.sigmoid(w)
    grab = lambda: h
    keep = grab()
    h += 1
    return h, keep


def in_a_nested_function(w):
    h = torch.sigmoid(w)

    def make():
        return lambda: h

    keep = make()()
    h += 1
    return h, keep


def train(w):
    h, keep = own_level(w)
    g, kept = in_a_nested_function(w)
    return (h * keep + g * kept).sum()


def main():
    w = torch.randn(3)
    with torch.no_grad():
        return [*own_level(w), *in_a_nested_function(w)]
"""


def test_a_lambda_handing_out_the_tensor_holds_it_at_either_level():
    fixed = fixed_source(LAMBDAS, project=True)
    assert "h = h + 1" not in fixed, fixed
    want, got = run_program(LAMBDAS), run_program(fixed)
    assert all(torch.equal(g, w) for g, w in zip(got, want))


def test_a_lambda_is_no_owner_so_its_read_at_the_own_level_reaches_escapes_directly():
    """The routing fact the branch rests on: the read in ``lambda: h`` is owned by ``own_level``."""
    import ast

    from codemod.analysis.source import Source
    from codemod.analysis.tree import Tree

    source = Source(LAMBDAS.encode())
    load = next(n for n in ast.walk(source.tree) if isinstance(n, ast.Lambda)).body
    assert getattr(Tree(source).owner(load), "name", None) == "own_level"


# ------------------------------------------------ 5. (review of af6aca4..7f29943) a listed leaf switched off
# 1f45886 proves `ws[1].fill_(0.1)` a write into a leaf that requires grad where `ws` is a list
# built of tensors made with requires_grad=True and read only by element or iterated before the
# write. An element read to switch its requires_grad off (`ws[1].requires_grad_(False)`,
# `ws[1].detach_()`, the loop variable `w.requires_grad_(False)` over `ws`) is such a read: the
# write then meets a tensor that requires no grad and the program runs.
LISTED = """\
import torch


def build():
    ws = [torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)]
SWITCH
    ws[1].fill_(0.1)
    return ws


def main():
    return build()
"""
SWITCHED_OFF = {
    "element-requires-grad-off": "    ws[1].requires_grad_(False)",
    "element-detached": "    ws[1].detach_()",
    "loop-variable-off": "    for w in ws:\n        w.requires_grad_(False)",
    "attribute-set": "    ws[1].requires_grad = False",
}


@pytest.mark.parametrize("way", sorted(SWITCHED_OFF))
def test_a_listed_leaf_switched_off_before_the_write_is_not_proven(way):
    source = LISTED.replace("SWITCH", SWITCHED_OFF[way])
    run_program(source)
    assert not _proven(source), _proven(source)


def test_a_listed_leaf_read_by_element_stays_proven():
    source = LISTED.replace("SWITCH", "    print(ws[0].shape)")
    assert raises_inplace(source, message="leaf Variable")
    assert _proven(source)


# ------------------------------------------------ 6. (review of af6aca4..7f29943) a leaf made by requires_grad_() switched off
# 152b5e5: `x = torch.randn(3).requires_grad_()` handed to a function that writes into its
# parameter is proven a leaf that requires grad, from x's binding alone. Switched off before the
# call (`x.requires_grad_(False)`, `x.detach_()`, `x.requires_grad = False`), the write meets a
# tensor that requires no grad: the program runs.
MADE_LEAF = """\
import torch


def scale(t):
    t.mul_(2)
    return t


def main():
    x = torch.randn(3).requires_grad_()
SWITCH
    return [scale(x)]
"""
LEAF_SWITCHED_OFF = {
    "requires-grad-off": "    x.requires_grad_(False)",
    "detached": "    x.detach_()",
    "attribute-set": "    x.requires_grad = False",
}


@pytest.mark.parametrize("way", sorted(LEAF_SWITCHED_OFF))
def test_a_leaf_made_by_requires_grad_and_switched_off_before_the_call_is_not_proven(way):
    source = MADE_LEAF.replace("SWITCH", LEAF_SWITCHED_OFF[way])
    run_program(source)
    assert not _proven(source), _proven(source)


def test_a_leaf_made_by_requires_grad_stays_proven():
    source = MADE_LEAF.replace("SWITCH", "    print(x.shape)")
    assert raises_inplace(source, message="leaf Variable")
    assert _proven(source)


def test_a_conditional_binding_of_names_not_rebound_keeps_the_unsafe_rebinding():
    """``loc = cumh if rev else cumw; kept = loc``: the fix rebinds ``loc`` and ``kept``, one
    tensor on every path (cumh and cumw are not read after the write): the unsafe tier's
    rebinding stays, and equals the original's results."""
    source = PICKED.replace("WRITE", "    kept = loc\n    loc += 1e-6").replace(
        "    return cumw * 2 + cumh * 3 + loc.sum()", "    return kept * 2 + loc.sum()")
    fixed = fixed_source(source, UNSAFE, project=True)
    assert "loc = kept = loc + 1e-6" in fixed, fixed
    assert all(torch.equal(g, w) for g, w in zip(run_program(fixed), run_program(source)))
