"""Speed work (issue 27) that must change no result: ``Names`` answers a name without a
function's dataflow where no import binds its head to torch (``torch_heads``) or no function
binds it at all (``bound_in_functions``). Each answer must be the one the full resolution gives:
here every name and attribute of a file is resolved with both screens and without them."""

from __future__ import annotations

import ast
import pathlib

import pytest

from codemod.analysis.model import SemanticModel
from codemod.analysis.source import Source

ROOT = pathlib.Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / "fixtures").rglob("*.in.py"))[::5] + sorted((ROOT / "codemod" / "analysis").glob("*.py"))


class _Every(frozenset):
    """Holds every name: a screen that lets everything through (the full resolution)."""

    def __contains__(self, item) -> bool:
        return True


def _answers(data: bytes, screened: bool):
    model = SemanticModel(Source(data))
    names = model.names
    if not screened:
        names._torch_heads = names._bound_in_functions = _Every()
    nodes = [n for n in ast.walk(model.module) if isinstance(n, (ast.Name, ast.Attribute))]
    return [(n.lineno, n.col_offset, names.torch_name(n), sorted(names.qualified_names(n))) for n in nodes]


# Every way a function body binds a name, each shadowing its own torch import of the module
# (one name per form: a form the screen missed shows alone); a nested function sees the
# enclosing one's binding. The lines marked resolve into torch, no other.
SHADOWED = '''
import torch
import torch.nn.functional as a_param, torch as a_loop, torch as a_managed, torch as a_walrus
from torch import relu as a_handler, relu as a_case_as, relu as a_case_star, relu as a_case_rest
from torch import nn as a_local_import, nn as a_local_from, nn as a_defined, nn as a_klass
import torch.nn as a_unpacked, torch.nn as a_starred, torch.nn as a_closure

def param(a_param):
    return a_param.relu(1)

def loop(xs):
    for a_loop in xs:
        a_loop.relu(1)

def managed():
    with open("f") as a_managed:
        a_managed.relu(1)

def walrus(x):
    if (a_walrus := x) is not None:
        return a_walrus.relu(x)

def handler():
    try:
        pass
    except ValueError as a_handler:
        a_handler(1)

def matched(v):
    match v:
        case [a_case_as, *a_case_star]:
            return a_case_as(a_case_star)
        case {"k": 1, **a_case_rest}:
            return a_case_rest(1)

def local_import():
    import numpy as a_local_import
    from numpy import relu as a_local_from
    return a_local_import.relu(a_local_from(1))

def defined():
    def a_defined(x):
        return x
    class a_klass:
        pass
    return a_defined(a_klass)

def unpacked(pair):
    (a_unpacked, [x, *a_starred]) = pair
    return a_unpacked.Linear(a_starred.Linear)

def outer(a_closure):
    def inner():
        return a_closure.Linear(1, 1)
    return inner

def declared():
    global a_param
    a_param = None  # torch
    return a_param.relu(2.5)  # torch

def plain(x):
    y = torch.zeros(3)  # torch
    return a_param.relu(a_klass.Linear(3, 3)(y + a_handler(x)))  # torch

class Holder:
    torch = None  # torch
    def method(self):
        return torch.zeros(1), a_loop.relu(self.torch)  # torch
'''


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_screened_names_resolve_as_the_full_resolution(path):
    data = path.read_bytes()
    assert _answers(data, True) == _answers(data, False)


def test_every_binding_form_in_a_function_still_shadows_a_torch_import():
    screened, full = _answers(SHADOWED.encode(), True), _answers(SHADOWED.encode(), False)
    assert screened == full
    lines = SHADOWED.splitlines()
    # (a `global` name and a class body's are the module's, as they always were)
    marked = {n for n, text in enumerate(lines, 1) if text.endswith("# torch")}
    assert {line for line, _, name, _ in screened if name} == marked
    assert {name for _, _, name, _ in screened} >= {"torch.nn.functional.relu", "torch.relu", "torch.zeros",
                                                        "torch.nn.Linear"}
