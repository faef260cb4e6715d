"""The copy meaning's written-elements masks hold for views of another element size.

``WrittenElements`` records which parts of a leaf's storage an update wrote, so that a later read
of a view that misses them can keep the copy meaning. A view of another dtype (``c.real`` of a
complex leaf, ``x.view(torch.int32)`` of a float64 one) counts its size, strides and offset in its
own elements: read with the leaf's element size they name other elements, and a read that does
cover a written element was judged not to (the meaning then decided on a false fact). Positions
are compared in bytes. Controls: same-dtype views keep their precision (a read beside the write
still misses it). Real torch, in process, new programs.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.references import LeafWatch, WrittenElements  # noqa: E402


def _written(leaf, target) -> WrittenElements:
    marks = WrittenElements()
    marks.mark(leaf, target)
    return marks


def test_a_complex_leaf_s_real_part_written_then_the_element_read():
    leaf = torch.zeros(6, dtype=torch.complex64)
    assert _written(leaf, leaf[:2].real).overlaps(leaf[1:2], leaf)  # element 1's real part was written


def test_a_complex_element_written_then_its_real_part_read():
    leaf = torch.zeros(6, dtype=torch.complex64)
    assert _written(leaf, leaf[2:3]).overlaps(leaf[2:3].imag, leaf)
    assert _written(leaf, leaf[1:2]).overlaps(torch.view_as_real(leaf)[1], leaf)


def test_a_float64_element_written_then_read_as_int32():
    leaf = torch.zeros(6, dtype=torch.float64)
    assert _written(leaf, leaf[1:2]).overlaps(leaf.view(torch.int32)[2:4], leaf)
    assert _written(leaf, leaf[1:2]).overlaps(leaf.view(torch.uint8)[12:13], leaf)


def test_an_int32_view_written_then_the_float64_element_read():
    leaf = torch.zeros(6, dtype=torch.float64)
    marks = _written(leaf, leaf.view(torch.int32)[2:4])  # the bytes of element 1
    assert marks.overlaps(leaf[1:2], leaf)


def test_reads_beside_a_write_of_another_dtype_still_miss_it():
    """Precision kept across dtypes where the leaf's elements really are apart. Within one
    element it is not: the imaginary part of an element whose real part was written counts as
    written (the leaf's element is the unit; saying "overlaps" only loses the copy meaning)."""
    leaf = torch.zeros(6, dtype=torch.complex64)
    marks = _written(leaf, leaf[:2].real)
    assert not marks.overlaps(leaf[3:], leaf)
    assert not marks.overlaps(leaf[2:].imag, leaf)
    assert marks.overlaps(leaf[:2].imag, leaf)


def test_same_dtype_views_keep_their_precision():
    leaf = torch.zeros(4, 3)
    marks = _written(leaf, leaf[:, :1])
    assert not marks.overlaps(leaf[:, 1:], leaf)
    assert marks.overlaps(leaf[2:3, 0:2], leaf)
    assert marks.overlaps(leaf, leaf)


def test_the_copy_meaning_does_not_fit_a_read_of_a_complex_element_whose_real_part_was_updated():
    """``c[:2].real`` scaled in place (a leaf that requires grad), then a view of element 1 made
    before the update read: in place it sees the update, the copy meaning would not."""
    def program():
        c = torch.randn(4, dtype=torch.complex64, requires_grad=True)
        second = c[1:2]
        c[:2].real.mul_(0.5)
        return second.abs().sum()

    watch = LeafWatch(copy_leaves=True)
    with watch:
        program()
    assert [u.op for u in watch.updates] == ["mul_"]
    assert watch.unfit is not None and "reads the leaf" in watch.unfit, watch.unfit


def test_the_copy_meaning_still_fits_a_read_of_an_untouched_complex_element():
    def program():
        c = torch.randn(4, dtype=torch.complex64, requires_grad=True)
        last = c[3:]
        c[:2].real.mul_(0.5)
        return last.abs().sum()

    watch = LeafWatch(copy_leaves=True)
    with watch:
        program()
    assert watch.unfit is None, watch.unfit
