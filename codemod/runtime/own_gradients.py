"""Which tensors are gradients the program computed itself, by provenance from the run.

A "Verified." needs something a rewrite of the backward could change (``verify``). Where the
harness's backward reaches no leaf, a program that differentiates itself and returns the result
still offers that: ``torch.autograd.grad``'s results, and what ``torch.autograd.functional``
(``jacobian``, ``hessian``, ``vjp``, ``jvp``, ``hvp``, ``vhp``) builds from them. Those are
recognised by what the run did, never by names in the source: a tensor is the program's own
gradient where it is a result of a ``grad`` call the program made (not the harness's), or was
made from one by an operation that only rearranges entries (stack, view, detach, split...), so
that every entry it holds is an entry of a gradient, verbatim. Arithmetic on a gradient (``g * 0``,
``g.sign()``, a norm) is not followed: such a value need not change when the gradient does.
"""

from __future__ import annotations

import weakref
from typing import Dict, Iterable

import torch

# Operations whose tensor results hold entries of their tensor arguments, verbatim (or of
# no other value): a Jacobian is stacked, viewed and detached from the ``grad`` results.
REARRANGING = frozenset({
    "stack", "cat", "concat", "concatenate", "hstack", "vstack", "view", "view_as", "reshape", "reshape_as",
    "flatten", "unflatten", "squeeze", "unsqueeze", "permute", "transpose", "t", "movedim", "moveaxis",
    "detach", "clone", "contiguous", "to", "cpu", "cuda", "split", "split_with_sizes", "chunk", "unbind",
    "__getitem__", "select", "narrow", "expand", "expand_as", "diagonal",
})


class OwnGradients:
    """Tensors the program computed as gradients, by identity (weak references: nothing is
    kept alive)."""

    def __init__(self) -> None:
        self._found: Dict[int, "weakref.ref[torch.Tensor]"] = {}

    def seen(self, name: str, tensors: Iterable[torch.Tensor], result, program: bool) -> None:
        """Note what one call made: the results of the program's ``grad`` call, and those of a
        rearranging operation on a tensor already noted."""
        if not program:
            return
        if name == "grad" or (name in REARRANGING and self._found and any(t in self for t in tensors)):
            for r in _tensors(result):
                if r.is_floating_point() or r.is_complex():
                    self._found[id(r)] = weakref.ref(r)
            if len(self._found) > 8192:  # drop the dead
                self._found = {k: w for k, w in self._found.items() if w() is not None}

    def __contains__(self, t: object) -> bool:
        found = self._found.get(id(t))
        return found is not None and found() is t

    def count(self, tensors: Iterable[torch.Tensor]) -> int:
        return sum(1 for t in tensors if t in self)


def _tensors(result):
    if isinstance(result, torch.Tensor):
        yield result
    elif isinstance(result, (list, tuple)):
        for item in result:
            yield from _tensors(item)
