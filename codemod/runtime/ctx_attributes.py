"""The oracle and tensors a custom ``autograd.Function`` keeps outside ``save_for_backward``.

The snapshot oracle copies what autograd saves, so later in-place writes cannot reach what
backward reads. A custom Function may also keep a tensor as a plain attribute of its ``ctx``
(``ctx.threshold = threshold``): autograd neither saves nor version-checks it, and a write after
the forward (``self.threshold -= ...``) silently changes what the backward reads. The program's
maintainers, rebinding out of place, mean the value the forward used; the oracle must mean the
same, or a repair that keeps the stale read compares equal to it and is called verified.

While the context is entered, every ``Function.apply`` records, for the tensors its ``ctx`` keeps
as attributes (directly or in a list, tuple or dict), their version and a copy at the end of the
forward; a hook on the node, run before its backward, puts the copy back in place of every such
tensor whose version moved since (a tensor left unwritten keeps its identity: a backward that
writes ``ctx.weight.grad`` still reaches the parameter).
"""
from __future__ import annotations

import contextlib
from typing import Any, Dict, Iterator, List, Tuple

import torch
from torch.autograd.function import BackwardCFunction

# what autograd itself keeps on a ctx (not the program's attributes)
_OWN = frozenset({"to_save", "saved_tensors", "needs_input_grad", "non_differentiable", "dirty_tensors",
                  "materialize_grads", "saved_for_forward", "_materialize_non_diff_grads"})


def _version(t: torch.Tensor):
    try:
        return t._version
    except RuntimeError:  # inference tensors have no version counter
        return None


def _copy(t: torch.Tensor) -> torch.Tensor:
    copied = t.detach().clone()  # a detached clone saves nothing for backward (no hook runs)
    if t.requires_grad and t.is_leaf:
        copied.requires_grad_(True)
    return copied


class _Kept:
    """One ctx attribute's tensors at the end of the forward: (index, tensor, version, copy)."""

    def __init__(self, value: Any) -> None:
        self.value = value
        self.items: List[Tuple[Any, torch.Tensor, Any, torch.Tensor]] = []
        if isinstance(value, torch.Tensor):
            self._keep(None, value)
        elif isinstance(value, (list, tuple)):
            for i, v in enumerate(value):
                if isinstance(v, torch.Tensor):
                    self._keep(i, v)
        elif isinstance(value, dict):
            for k, v in value.items():
                if isinstance(v, torch.Tensor):
                    self._keep(k, v)

    def _keep(self, index: Any, t: torch.Tensor) -> None:
        version = _version(t)
        if version is not None:
            self.items.append((index, t, version, _copy(t)))

    def restored(self) -> Any:
        """The attribute as the forward left it (the same object where nothing was written)."""
        moved = {index: copy for index, t, version, copy in self.items if t._version != version}
        if not moved:
            return self.value
        if None in moved:
            return moved[None]
        if isinstance(self.value, dict):
            return {k: moved.get(k, v) for k, v in self.value.items()}
        items = [moved.get(i, v) for i, v in enumerate(self.value)]
        return type(self.value)(items) if isinstance(self.value, tuple) else items


def _outputs(out: Any) -> Iterator[torch.Tensor]:
    if isinstance(out, torch.Tensor):
        yield out
    elif isinstance(out, (list, tuple)):
        for o in out:
            if isinstance(o, torch.Tensor):
                yield o


def _watch(out: Any) -> None:
    for o in _outputs(out):
        node = o.grad_fn
        if isinstance(node, BackwardCFunction):
            break
    else:
        return
    if getattr(node, "_inplacefix_kept", None) is not None:
        return
    kept: Dict[str, _Kept] = {}
    for name, value in list(vars(node).items()):
        if name in _OWN or name.startswith("_inplacefix"):
            continue
        k = _Kept(value)
        if k.items:
            kept[name] = k
    node._inplacefix_kept = kept
    if not kept:
        return

    def restore(grad_outputs):
        for name, k in kept.items():
            if getattr(node, name, None) is k.value:
                setattr(node, name, k.restored())
        return None

    node.register_prehook(restore)


@contextlib.contextmanager
def snapshot_ctx_attributes():
    """Custom Functions' ctx attributes read by backward as the forward left them (see above)."""
    function = torch.autograd.Function
    original = function.__dict__["apply"]
    inner = original.__func__

    def apply(cls, *args, **kwargs):
        out = inner(cls, *args, **kwargs)
        _watch(out)  # a failure here fails the oracle's run: unknown is not yes (never a silent stale read)
        return out

    function.apply = classmethod(apply)
    try:
        yield
    finally:
        function.apply = original
