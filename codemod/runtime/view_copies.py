"""The reference for the view family: every write PyTorch refuses goes into a copy of the view.

PyTorch refuses in-place writes to three kinds of views (``analysis/views.py``): outputs of a
function that returns several views (``chunk``, ``split``, ``unbind``), views made under
``no_grad`` written with grad on, and views returned by a custom ``autograd.Function``. The
fix (IPF006) writes into a copy instead (``q = q * s``, or ``q = q.clone()`` before the write),
so the reference is the program with each such view replaced by a copy of itself when it is
made: the write lands in the copy, the tensor viewed keeps its values, and gradients flow
through ``clone`` (the identity) as through the view. PyTorch itself says which views these
are (their creation meta), so the reference does not depend on the static analysis.

The reference is the program's meaning only where nothing reads the tensor viewed after the
write (in place, it would have seen the change): the rule decides that statically, and a
repair outside that case is ``unproven``.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.overrides import TorchFunctionMode

_META = torch._C._autograd.CreationMeta
REFUSED = (_META.MULTI_OUTPUT_NODE, _META.NO_GRAD_MODE, _META.IN_CUSTOM_FUNCTION)


def refused_view(t: Any) -> bool:
    """A view PyTorch refuses to modify in place (given grad requirements at the write)."""
    return isinstance(t, torch.Tensor) and t._is_view() and \
        torch._C._autograd._get_creation_meta(t) in REFUSED


def _copy(t: Any) -> Any:
    return t.clone() if refused_view(t) else t


class WritesIntoCopies(TorchFunctionMode):
    """Run a program with every refused view replaced by a copy of itself, made where the view
    is made (under the same grad mode): the meaning of IPF006's fix."""

    def __init__(self) -> None:
        super().__init__()
        self.copies = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        out = func(*args, **(kwargs or {}))
        if type(out) is tuple or type(out) is list:
            if any(refused_view(t) for t in out):
                self.copies += sum(refused_view(t) for t in out)
                return type(out)(_copy(t) for t in out)
            return out
        if refused_view(out):
            self.copies += 1
            return _copy(out)
        return out
