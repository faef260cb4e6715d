"""``references.LeafSources`` (split out of ``LeafWatch``, issue 27): what each tensor of a run was
computed from. An update whose operands came from the leaf itself is a step of the computation;
one whose operands did not is a state set; ``detach`` cuts the chain."""

from __future__ import annotations

import torch

from codemod.runtime.references import LeafSources, LeafWatch


def test_an_update_with_operands_from_the_leaf_is_a_step_and_a_state_set_is_not():
    R = torch.randn(4, requires_grad=True)
    w = torch.randn(4, requires_grad=True)
    watch = LeafWatch(no_grad_leaves=True)
    with watch:
        m = R.abs() * 2
        R[m < 0.5] = 0  # the mask comes from R: a step
        w.add_(torch.ones(4))  # from nothing the program computed: a state set
        d = R.detach() * 3
    assert [why.rsplit(", ", 1)[-1] for why in watch._stepped.values()] == ["with operands computed from the leaf itself"]
    assert id(R) in watch._stepped and id(w) not in watch._stepped
    assert [u.op for u in watch.updates] == ["__setitem__", "add_"]
    assert watch._sources.of(d) == frozenset()  # detach cut the chain
    assert watch._sources.of(m) == {id(R)}


def test_leaf_sources_follow_views_to_their_base():
    leaf = torch.randn(3, 2, requires_grad=True)
    sources = LeafSources({id(leaf)})
    assert sources.of(leaf) == {id(leaf)}
    other = torch.randn(3)
    view = other[1:]
    sources.derive([leaf], other)  # `other` computed from the leaf
    assert sources.of(view) == {id(leaf)}
    assert sources.of(torch.randn(2)) == frozenset()
