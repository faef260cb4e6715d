"""Leaves a function was handed and updated in place, then computed with in the same call.

The no-grad meaning is the meaning of state sets: init, weight surgery, manual steps. A function
that is handed a leaf requiring grad as an argument (a forward's input whose gradient the program
reads: saliency, attribution, a PDE's coordinates), writes it (``x.mul_(mask)``) and then computes
with it in the same call is doing a step of its computation on its input: its out-of-place form
(``x = x * mask``) is what it means, and the gradient the program reads for the input goes through
the update. An init helper handed a leaf writes it and returns: nothing in that call computes with
it, so it stays a state set. An ``nn.Parameter`` is state by type and never counts here.
"""

from __future__ import annotations

import sys
import types
import weakref
from typing import Dict, Iterator, List, Optional, Tuple

import torch

_CO_VARARGS = 0x04
_CO_VARKEYWORDS = 0x08


def user_frame(depth: int = 1) -> Optional[types.FrameType]:
    """The innermost frame outside torch and this tool, from ``depth`` frames above this one."""
    torch_dir = torch.__file__.rsplit("/", 1)[0]
    frame: Optional[types.FrameType] = sys._getframe(depth)
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith(torch_dir) and "/codemod/runtime/" not in name and not name.startswith("<frozen"):
            return frame
        frame = frame.f_back
    return None


def _arguments(frame: types.FrameType) -> List[object]:
    """The values the frame's function was called with, as its parameters hold them now."""
    code = frame.f_code
    count = code.co_argcount + code.co_kwonlyargcount
    names = list(code.co_varnames[:count])
    if code.co_flags & _CO_VARARGS:
        names.append(code.co_varnames[count])
    local = frame.f_locals
    values: List[object] = []
    for name in names:
        value = local.get(name)
        values.extend(value if isinstance(value, (tuple, list)) else [value])
    if code.co_flags & _CO_VARKEYWORDS:
        extra = local.get(code.co_varnames[count + (1 if code.co_flags & _CO_VARARGS else 0)])
        if isinstance(extra, dict):
            values.extend(extra.values())
    return values


Scope = Tuple[int, types.CodeType]  # a call: the id of its frame and its code


def writer_scope(leaf: torch.Tensor) -> Optional[Scope]:
    """The call that writes ``leaf`` now, where it was handed ``leaf`` as an argument (never
    for an ``nn.Parameter``: state by type); else None."""
    if isinstance(leaf, torch.nn.Parameter):
        return None
    frame = user_frame()
    if frame is not None and any(v is leaf for v in _arguments(frame)):
        return id(frame), frame.f_code
    return None


def in_scope(scope: Scope) -> bool:
    """Whether the call ``scope`` names is running (its frame is on the stack)."""
    frame = user_frame()
    while frame is not None and (id(frame), frame.f_code) != scope:
        frame = frame.f_back
    return frame is not None


class HandedInputs:
    """The updates of handed-in leaves still waiting for a read in their writer's call."""

    def __init__(self) -> None:
        # id(leaf) -> (the leaf, the writer's call, where the update is)
        self._pending: Dict[int, Tuple["weakref.ref[torch.Tensor]", Scope, str]] = {}

    def updated(self, leaf: torch.Tensor, where: str) -> None:
        """An update of ``leaf`` under the no-grad meaning: pending where the writer was handed it."""
        scope = None if id(leaf) in self._pending else writer_scope(leaf)
        if scope is not None:
            self._pending[id(leaf)] = (weakref.ref(leaf), scope, where)

    def computed_with(self, tensors: List[torch.Tensor]) -> Iterator[Tuple[int, str]]:
        """(id of the leaf, why) for each pending leaf that ``tensors`` (the inputs of an op whose
        result requires grad) read, while its writer's call is still running."""
        if not self._pending:
            return
        for t in tensors:
            base = t._base if t._base is not None else t
            found = self._pending.get(id(base))
            if found is None or found[0]() is not base:
                continue
            if in_scope(found[1]):
                del self._pending[id(base)]
                yield id(base), (f"{found[2]}, on an input the function was handed and computes with "
                                 "afterwards")
