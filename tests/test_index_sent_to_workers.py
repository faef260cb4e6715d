"""The project index as `-j N` workers get it: pickled for each share of files, by a thread of
the pool while this process already analyses its own share with the same index, filling the
answers it works out on first use (``_import_links``, ``other_dtype``, ``hooks``...). A copy
taken while one of those was half filled answered from it: with a cache on torch's
nn/optim/autograd/distributions, `-j 2` now and then took `nn.utils.spectral_norm` for a file
linked to nothing, so that no half tensor could reach it, and called an unsafe fix safe (the
run with `-j 1` said unsafe). A copy carries the facts only; it works its answers out itself."""

from __future__ import annotations

import pickle
import textwrap

from codemod.engine.project import build_index

HALF = textwrap.dedent('''\
    import torch


    def to_half(x):
        return x.half()
''')
USER = textwrap.dedent('''\
    import torch
    from pkg.half import to_half


    def scale(v):
        v.mul_(2)
        return to_half(v)
''')


def _index(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "half.py").write_text(HALF)
    (pkg / "user.py").write_text(USER)
    return build_index([str(pkg / "__init__.py"), str(pkg / "half.py"), str(pkg / "user.py")])


def test_a_copy_taken_while_the_links_are_half_filled_answers_as_the_index(tmp_path):
    index = _index(tmp_path)
    expected = index.other_dtype("pkg.user")
    assert expected is not None and expected.startswith("pkg.half: ")
    fresh = _index(tmp_path)
    fresh._links = {}  # as `_import_links` leaves it while it fills the links
    copy = pickle.loads(pickle.dumps(fresh))
    assert copy.other_dtype("pkg.user") == expected
    assert copy.hooks("pkg.user") == index.hooks("pkg.user")


def test_a_copy_carries_no_answer_worked_out_before(tmp_path):
    index = _index(tmp_path)
    index.other_dtype("pkg.user")
    index.grad_off("pkg.half.to_half")
    index.canonical("pkg.half.to_half")
    copy = pickle.loads(pickle.dumps(index))
    assert copy._links is None and copy._dtypes is None and copy._hooks is None
    assert copy._canonical == {} and copy._grad_off == {} and copy._by_module is None
    assert copy.other_dtype("pkg.user") == index.other_dtype("pkg.user")
    assert copy.module_names == index.module_names and copy.modules.keys() == index.modules.keys()
