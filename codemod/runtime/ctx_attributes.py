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

A tensor held one level inside another object (``ctx.layer = self``, then ``ctx.layer.weight``)
cannot be put back without changing the object the program owns: where one of those moved, the
backward raises (the oracle's run fails, so nothing is called verified against a stale read).
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


class CtxAttributeWritten(RuntimeError):
    """A tensor a custom Function's backward may read through an object kept on its ctx was
    written in place after the forward: the oracle cannot give the backward the forward's value."""


def _held(value: Any) -> List[Tuple[str, torch.Tensor, Any]]:
    """Tensors one level inside an object kept on a ctx: a module's parameters and buffers, or
    the tensors among a plain object's attributes (name, tensor, version)."""
    if isinstance(value, torch.nn.Module):
        pairs = list(value.named_parameters()) + list(value.named_buffers())
    elif hasattr(value, "__dict__") and not isinstance(value, (type, torch.Tensor)):
        pairs = [(k, v) for k, v in vars(value).items() if isinstance(v, torch.Tensor)]
    else:
        return []
    return [(k, t, _version(t)) for k, t in pairs if _version(t) is not None]


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
    held: Dict[str, List[Tuple[str, torch.Tensor, Any]]] = {}
    for name, value in list(vars(node).items()):
        if name in _OWN or name.startswith("_inplacefix"):
            continue
        k = _Kept(value)
        if k.items:
            kept[name] = k
        elif not isinstance(value, (list, tuple, dict)):
            inside = _held(value)
            if inside:
                held[name] = inside
    node._inplacefix_kept = kept
    if not kept and not held:
        return

    def restore(grad_outputs):
        for name, k in kept.items():
            if getattr(node, name, None) is k.value:
                setattr(node, name, k.restored())
        for name, inside in held.items():
            moved = [key for key, t, version in inside if t._version != version]
            if moved:
                raise CtxAttributeWritten(
                    f"inplacefix: the backward of {type(node).__name__} may read ctx.{name}.{moved[0]}, written in "
                    "place after its forward; the oracle cannot give it the value the forward used (not compared)")
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
