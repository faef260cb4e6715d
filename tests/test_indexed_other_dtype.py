"""``dtype.indexed_other_dtype`` (what the project index and the model read of a file's dtypes)
names the same first place as ``dtype.other_dtype``'s breadth-first walk of every node, from the
source's filed node lists only: the shallower hit first, at one depth the earlier path; the
facts of the whole file (a data library imported, docstrings, ``torch.load`` into a state dict)
decide as before."""

from __future__ import annotations

import textwrap

import pytest

from codemod.analysis.dtype import indexed_other_dtype, other_dtype
from codemod.analysis.source import Source

PROGRAMS = {
    # deep first in the text, a shallower one further down: breadth first names the shallower
    "shallow_after_deep": ('''
        import torch

        def f(x):
            if x is not None:
                return x.double()
            return x

        y = torch.zeros(2).half()
    ''', "`.half(...)` at line 9"),
    # one depth, two hits: the one whose path comes first
    "same_depth": ('''
        import torch
        a = torch.ones(1).double()
        b = torch.ones(1).bfloat16()
    ''', "`.double(...)` at line 3"),
    # a keyword lies below its call: the call of the next line, one level up, comes first
    "keyword_below_call": ('''
        import torch
        a = torch.ones(1, dtype=torch.float16)
        b = torch.ones(1).bfloat16()
    ''', "`.bfloat16(...)` at line 4"),
    "docstring_only": ('''
        """Works in half precision too."""
        import torch
        x = torch.ones(2)
    ''', None),
    "string_not_docstring": ('''
        import torch
        mode = "fp16"
    ''', "'fp16' at line 3"),
    "array_data": ('''
        import numpy as np
        import torch
        t = torch.tensor(np.load("a.npy"))
    ''', "`tensor(...)` of data that may come from an array at line 4"),
    "loaded_into_state": ('''
        import torch
        model = torch.nn.Linear(2, 2)
        model.load_state_dict(torch.load("w.pt"))
    ''', None),
    "imported_name": ('''
        from torch import float64
    ''', "`float64` imported at line 2"),
    "class_keyword": ('''
        class A(Base, torch_dtype=None):
            pass
    ''', None),
    "nothing": ('''
        import torch
        x = torch.ones(2) * 3
        x.view(-1)
    ''', None),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_filed_lists_name_what_the_walk_of_every_node_names(name):
    code, expected = PROGRAMS[name]
    source = Source(textwrap.dedent(code).encode())
    assert other_dtype(source.tree, source.children) == expected
    assert indexed_other_dtype(source) == expected
