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

import sys
import weakref
from typing import Any, Dict, List, Optional, Set, Tuple

import torch
from torch.overrides import TorchFunctionMode

from codemod.runtime.references import _flat, _user_line, is_inplace_call

_META = torch._C._autograd.CreationMeta
REFUSED = (_META.MULTI_OUTPUT_NODE, _META.NO_GRAD_MODE, _META.IN_CUSTOM_FUNCTION)
_AUTOGRAD = {"grad", "backward"}
# What these modes look at (``_is_view``, storages, ``requires_grad``) is not the program's: with
# torch functions off, the modes under them (the leaf watch, which notes each leaf's first read)
# never see it.
_UNSEEN = torch._C.DisableTorchFunction


def refused_view(t: Any) -> bool:
    """A view PyTorch refuses to modify in place (given grad requirements at the write)."""
    return isinstance(t, torch.Tensor) and t._is_view() and \
        torch._C._autograd._get_creation_meta(t) in REFUSED


def _storage(t: torch.Tensor) -> int:
    try:
        return t.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):  # tensors without storage (meta, sparse)
        return -id(t)


class WritesIntoCopies(TorchFunctionMode):
    """Run a program with every refused view replaced by a copy of itself, made where the view
    is made (under the same grad mode): the meaning of IPF006's fix.

    The copy changes the program only where the copy and the tensor viewed part ways: a write
    into the copy that the tensor viewed is read after (``unfit``: in place it would have seen
    the write), or a write into the tensor viewed that the copy is read after. Either makes the
    reference unfit; which views get copies is read off PyTorch's own view metadata."""

    def __init__(self) -> None:
        super().__init__()
        self.copies = 0
        self.unfit: Optional[str] = None
        self.writes: List[str] = []  # where a copy took a write PyTorch would have refused or allowed
        # id(copy) -> (copy, the storage it was copied from, the tensor viewed, the call that made
        # it): weak, so that a storage freed and reused by another tensor is never taken for the
        # one viewed.
        self._copies: Dict[int, Tuple["weakref.ref[torch.Tensor]", int, Any, int]] = {}
        self._calls = 0  # calls that made copies: the outputs of one chunk are disjoint
        # storage -> (the call that made a written copy, the tensor it viewed) for each such write
        self._written_copies: Dict[int, List[Tuple[int, Any]]] = {}
        self._written_bases: Dict[int, Any] = {}  # storage -> the tensor viewed, whose view's copy was written
        self._stale: Set[int] = set()  # copies whose base was written after they were made

    def _copy(self, t: Any, call: int) -> Any:
        with _UNSEEN():
            if not refused_view(t):
                return t
            quiet = t.requires_grad and not torch.is_grad_enabled()
        if quiet:
            # A view made under no_grad of a tensor that requires grad requires grad itself
            # (autograd treats it as a leaf of its own, its gradient reaching nothing the program
            # holds); a plain clone here would not. The copy gets its flag through a private leaf
            # no harness sees (torch functions off), so that it still takes writes with grad on.
            with torch._C.DisableTorchFunction(), torch.enable_grad():
                copy = t.detach().requires_grad_().clone()
        else:
            copy = t.clone()
        self.copies += 1
        with _UNSEEN():
            base = t._base if t._base is not None else t
            self._copies[id(copy)] = (weakref.ref(copy), _storage(t), weakref.ref(base), call)
        return copy

    def _copy_of(self, t: Any) -> Optional[Tuple[int, Any]]:
        """(the storage, a weak reference to the tensor viewed) when ``t`` is one of this run's copies."""
        found = self._copies.get(id(t)) if isinstance(t, torch.Tensor) else None
        return (found[1], found[2]) if found is not None and found[0]() is t else None

    def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if name not in _AUTOGRAD:  # the harness's backward: what it reads are the program's outputs
            with _UNSEEN():
                self._check_reads(name, [a for a in _flat([args, kwargs]) if isinstance(a, torch.Tensor)])
        out = func(*args, **kwargs)
        with _UNSEEN():
            if is_inplace_call(name, kwargs) and args and isinstance(args[0], torch.Tensor):
                self._note_write(name, args[0])
            self._calls += 1
            several = type(out) is tuple or type(out) is list
            if several and not any(refused_view(t) for t in out):
                return out
        if several:
            return type(out)(self._copy(t, self._calls) for t in out)
        return self._copy(out, self._calls)

    def read_outputs(self, outputs: Any) -> None:
        """The program's outputs are read too (compared): a tensor viewed among them counts."""
        with _UNSEEN():
            self._check_reads("the outputs", [t for t in _flat([outputs]) if isinstance(t, torch.Tensor)])

    def _note_write(self, name: str, target: torch.Tensor) -> None:
        # A write into a piece of a copy (``row[:, 0].clamp_()``, ``row`` the copy of an output
        # of ``unbind``) is a write into the copy: PyTorch refuses it as it refuses the view's
        # own (the piece inherits its creation meta). A copy is no view, so it is the piece's base.
        copied = self._copy_of(target)
        if copied is None and target._is_view():
            copied = self._copy_of(target._base)
            target = target._base if copied is not None else target
        if copied is not None:
            self._written_bases[copied[0]] = copied[1]
            self._written_copies.setdefault(copied[0], []).append((self._copies[id(target)][3], copied[1]))
            self.writes.append(f"{_user_line()} ({name})")
            return
        written = _storage(target)
        for key, (ref, storage, _, _) in self._copies.items():
            if storage == written and ref() is not None:
                self._stale.add(key)

    def _check_reads(self, name: str, tensors: List[torch.Tensor]) -> None:
        if self.unfit is not None or not (self._written_bases or self._stale):
            return
        for t in tensors:
            viewed = self._written_bases.get(_storage(t))
            if self._copy_of(t) is None and viewed is not None and viewed() is not None:
                where = "the outputs" if name == "the outputs" else f"{_user_line()}: `{name}`"
                self.unfit = (f"{where} read the tensor viewed after a write into a copy of its view; "
                              "in place it would have seen the write")
            elif id(t) in self._stale and self._copy_of(t) is not None:
                self.unfit = (f"{_user_line()}: `{name}` reads a view after the tensor it views was "
                              "written; in place it would have seen the write")
            elif self._other_view_written(t):
                where = "the outputs" if name == "the outputs" else f"{_user_line()}: `{name}`"
                self.unfit = (f"{where} read another view of the tensor viewed after a write into a "
                              "copy of a view; in place it may have seen the write")

    def _other_view_written(self, t: torch.Tensor) -> bool:
        """``t`` is the copy of a view whose tensor viewed also gave a view, made by another
        call, whose copy was written: the two views may overlap (``h[0]`` and ``h[0:2]``);
        outputs of one ``chunk`` are disjoint."""
        found = self._copies.get(id(t))
        if found is None or found[0]() is not t:
            return False
        viewed = found[2]()
        return viewed is not None and any(call != found[3] and base() is viewed
                                          for call, base in self._written_copies.get(found[1], ()))


_FUNCTION_FILE = torch.autograd.function.__file__


def _in_custom_function() -> bool:
    """Whether a custom ``autograd.Function``'s ``forward`` is running (its ``apply`` is on the
    stack): PyTorch turns grad off there, and what it returns is the Function's own output."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename == _FUNCTION_FILE and frame.f_code.co_name == "apply":
            return True
        frame = frame.f_back
    return False


class ViewsAllowed(TorchFunctionMode):
    """Run a program with every view PyTorch refuses to modify replaced by what it allows in
    its place with grad off, made where the view is made:

    - an output of a function that returns several views (``chunk``, ``split``, ``unbind``,
      iterating a tensor) becomes an ordinary view of the same memory: the writes reach the
      tensor viewed, autograd tracking them;
    - a view made under ``no_grad`` becomes a detached alias of the same memory (``v.detach()``):
      PyTorch's "both inside the no_grad block" meaning, spelled out. The program took the view
      with grad off, so autograd tracks neither the view nor writes into it; the writes reach
      the memory, and every later read sees them.

    This is the reference where writes into copies does not fit: the tensor viewed, or another
    view of it, is read after the write, and in place it sees the write. A rewrite that makes
    those views ordinary ones (``x.unbind(0)`` -> ``tuple(x.select(0, i) for i in ...)``) or
    detaches the views made under ``no_grad`` (``v = h[0].detach()``) computes this meaning;
    one that writes into a copy does not. Views made by a custom ``Function`` (as its output,
    or inside its ``forward``) are left as they are. (A view made under ``no_grad`` of a tensor
    that requires grad requires grad itself, a leaf of its own whose gradient reaches nothing
    the program holds; the detached alias does not: the gradients of everything else are the
    same.)"""

    def __init__(self) -> None:
        super().__init__()
        self.replaced: List[str] = []  # where a refused view was made ordinary or detached

    def _ordinary(self, t: Any) -> Any:
        with _UNSEEN():
            if not (isinstance(t, torch.Tensor) and t._is_view()):
                return t
            meta = torch._C._autograd._get_creation_meta(t)
        if meta not in (_META.MULTI_OUTPUT_NODE, _META.NO_GRAD_MODE):
            return t
        if meta == _META.NO_GRAD_MODE and _in_custom_function():
            return t  # a Function's forward runs with grad off: its views are the Function's business
        with _UNSEEN():
            if meta == _META.NO_GRAD_MODE:
                view = t.detach()
            else:
                view = t._base.as_strided(t.size(), t.stride(), t.storage_offset())
        self.replaced.append(_user_line())
        return view

    def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        out = func(*args, **(kwargs or {}))
        if type(out) is tuple or type(out) is list:
            return type(out)(self._ordinary(t) for t in out)
        return self._ordinary(out)
