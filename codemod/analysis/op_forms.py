"""What torch ops keep for backward where the generator's probes (``OP_SAVES_MEASURED``, run on
one form of each op with dense float inputs) do not reach: checked against torch by
tests/test_recall56_pad_modes.py and tests/test_recall56_sparse_constructors.py.

**Sparse constructors.** ``torch.sparse_coo_tensor(indices, values, size)`` and the compressed ones
(``sparse_csr_tensor``, ``csc``, ``bsr``, ``bsc``, ``sparse_compressed_tensor``) keep their result
for backward (the values' gradient is masked by it), so a write into the sparse tensor
afterwards trips backward: PyTorch3D's ``cot_laplacian`` building ``L`` and then ``L += L.t()``
(set17/1101). They were ops the analysis could not see into.

**Padding.** What ``F.pad`` saves hangs on its mode (measured with torch 2.13 on 1-, 2- and 3-d padding,
tests/test_recall56_pad_modes.py): ``reflect`` and ``replicate`` keep the input for backward
(the reflection / replication pad's backward reads it), ``constant`` (the default) and
``circular`` keep nothing of it. The op data (``OP_SAVES_MEASURED["pad"]``) was measured in the
default mode only, so ``F.pad(x, p, mode="reflect")`` then ``x += y`` was taken to break nothing
(kornia's ``filter2d(boundary, kernel, border_type="replicate")`` in ``distance_transform``).

A mode the analysis cannot read (an attribute, a variable, ``**kwargs``), or modes of both
kinds, leave the call as it was read before (the default mode's data: nothing kept), so that
no other answer changes: it proves nothing there. A module-level function's parameter (``mode=border_type``) is read
as every call of the function in the file passes it (or leaves the default), the function's name
used for nothing but those calls, as hazard's ``_passed_function`` reads a callable handed in.
"""

from __future__ import annotations

import ast
from typing import Optional, Set, Tuple

from codemod.analysis.facts import Facts
from codemod.analysis.syntax import FUNCTIONS, default_of, passed_for, spreads

SPARSE_CONSTRUCTORS = frozenset({"torch.sparse_coo_tensor", "torch.sparse_csr_tensor", "torch.sparse_csc_tensor",
                                 "torch.sparse_bsr_tensor", "torch.sparse_bsc_tensor", "torch.sparse_compressed_tensor"})
SAVING_MODES = frozenset({"reflect", "replicate"})  # the input is kept for backward
PLAIN_MODES = frozenset({"constant", "circular"})  # nothing of the input is kept
PAD = "torch.nn.functional.pad"


def form_saves(model: Facts, call: ast.Call, name: str) -> Optional[Tuple[str, ...]]:
    """What the torch op ``name`` called as ``call`` keeps, where this module knows more than the
    op data (a sparse constructor, a pad in a mode that keeps its input); None elsewhere."""
    if name in SPARSE_CONSTRUCTORS:
        return ("output",)
    if name == PAD and pad_saves(model, call):
        return ("input0",)
    return None


def sparse_made(reason: str) -> bool:
    """A hazard's reason names a sparse constructor's result: what it says holds of that tensor
    only (``D = L.to_dense()`` may alias a dense ``L``, never a sparse one: the alias is not followed)."""
    return any(f"{name}`" in reason or f"{name} (line" in reason for name in SPARSE_CONSTRUCTORS)


def pad_saves(model: Facts, call: ast.Call) -> Optional[bool]:
    """Whether ``F.pad(...)`` (``call``) keeps its input for backward: True (every mode it may
    run in does), False (none does), None (unknown, or some do and some do not)."""
    modes = _modes(model, call)
    if modes is None or not modes <= SAVING_MODES | PLAIN_MODES:
        return None
    if modes <= SAVING_MODES:
        return True
    return False if modes <= PLAIN_MODES else None


def _modes(model: Facts, call: ast.Call) -> Optional[Set[str]]:
    if any(isinstance(a, ast.Starred) for a in call.args[:3]) or any(k.arg is None for k in call.keywords):
        return None
    mode = passed_for(call, "mode", 2)
    if mode is None:
        return {"constant"}
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return {mode.value}
    return _parameter_values(model, mode) if isinstance(mode, ast.Name) else None


def _parameter_values(model: Facts, name: ast.Name) -> Optional[Set[str]]:
    """The strings a module-level function's parameter ``name`` holds: what every call of the
    function in the file passes for it, or its default (None: one is no string literal, the
    name is rebound before the read, or the function is used otherwise or never called)."""
    func = model.owner(name)
    if not isinstance(func, FUNCTIONS) or model.parent(func) is not model.module:
        return None
    reaching = model.reaching(model.flow(func), name.id, model.statement_of(name))
    if not reaching or any(b.form != "param" for b in reaching):
        return None
    args = func.args
    plain = [a.arg for a in (*args.posonlyargs, *args.args)]
    position = plain.index(name.id) if name.id in plain else None
    sites = model.calls_in(model.module).get(func.name, [])
    loads = {id(m) for m in model.mentions(func.name) if isinstance(m, ast.Name) and isinstance(m.ctx, ast.Load)}
    defined = [s for s in model.module.body if isinstance(s, (*FUNCTIONS, ast.ClassDef)) and s.name == func.name]
    if not sites or defined != [func] or loads != {id(s.func) for s in sites}:
        return None  # handed on, rebound or never called here: its callers are not all seen
    found: Set[str] = set()
    for site in sites:
        if spreads(site):
            return None
        value = passed_for(site, name.id, position) or default_of(func, name.id)
        if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
            return None
        found.add(value.value)
    return found
