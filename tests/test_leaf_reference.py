"""The no-grad meaning (``references.LeafWatch``), the reference leaf errors are verified against:
it applies in-place updates of leaves that require grad outside autograd, and says it does not
fit where the computation being differentiated already holds the leaf in its graph (then what
the program means is not known, and no rewrite may be called verified). Real torch, in process.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.references import LeafWatch  # noqa: E402


def watched(fn, differentiate=False):
    """``differentiate``: the harness's backward of the result, inside the watch as in a run."""
    watch = LeafWatch(no_grad_leaves=True)
    with watch:
        result = fn()
        if differentiate:
            leaves = [t for t in watch.leaves]
            torch.autograd.grad(result.sum(), leaves, allow_unused=True)
    return watch, result


def test_an_update_after_a_read_the_graph_keeps_does_not_fit():
    def program():
        w = torch.ones(3, requires_grad=True)
        y = w * 2  # the differentiated computation holds w
        w.add_(1)
        return (y + w).sum()

    watch, _ = watched(program, differentiate=True)
    assert watch.unfit is not None and "already read" in watch.unfit


def test_an_update_after_a_read_no_backward_goes_through_fits():
    """A forward kept for a printed score before the update: still held by a name, but no
    backward goes through it; the loss after the update reads the updated leaf only."""
    def program():
        w = torch.ones(3, requires_grad=True)
        score = w * 2  # evaluated before the edit, never differentiated
        float(score.sum())
        w.add_(1)
        return (w * 3).sum()

    watch, _ = watched(program, differentiate=True)
    assert watch.unfit is None


def test_a_read_that_left_nothing_behind_fits():
    """``w[src].detach()``: the graph of the read is dropped at once; and the update's own
    target (a view of the leaf) is the leaf, not a read of it."""
    def program():
        w = torch.nn.Parameter(torch.randn(4, 3))
        w[2] = w[0].detach() * 0.5
        w[:, 1] -= torch.ones(4)
        return (w * 3).sum()

    watch, loss = watched(program)
    assert watch.unfit is None
    assert [u.op for u in watch.updates] == ["__setitem__", "sub_", "__setitem__"]
    loss.backward()


def test_a_read_kept_through_a_later_result_does_not_fit():
    """The read's own result is gone, but a tensor computed from it still holds the leaf."""
    def program():
        w = torch.ones(3, requires_grad=True)
        h = (w[0] * 2).exp()  # w[0] * 2 is freed; h's graph still reaches w
        w.zero_()
        return h

    watch, _ = watched(program, differentiate=True)
    assert watch.unfit is not None


def test_nn_init_turns_grad_off_itself_and_is_neither_an_update_nor_a_read():
    """``nn.Embedding`` calls ``init.normal_(tensor=...)``-style helpers with grad on; they are
    fine as written, and must not make a later update look like one after a read."""
    def program():
        emb = torch.nn.Embedding(5, 2)
        torch.nn.init.normal_(tensor=emb.weight)
        emb.weight.copy_(torch.randn(5, 2))
        return emb(torch.tensor([1, 2])).sum()

    watch, _ = watched(program)
    assert watch.unfit is None
    assert [u.op for u in watch.updates] == ["copy_"]


def test_the_reference_really_updates():
    def program():
        p = torch.nn.Parameter(torch.zeros(2))
        p.add_(torch.ones(2))
        return p

    _, p = watched(program)
    assert torch.equal(p.detach(), torch.ones(2)) and p.is_leaf and p.requires_grad
