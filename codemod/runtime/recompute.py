"""The reference of the step-order repair's "recompute" meaning: the forward run again after the step.

A step-order conflict (``opt_D.step()`` between the forward that built ``loss_G`` through D and
``loss_G.backward()``) has two meanings. "As computed" (the snapshot oracle) differentiates
through the values the forward used. **Recompute** differentiates through the updated
parameters: the part of the forward that the stepped module takes part in runs again after the
step (the usual GAN recipe: D's loss, step D, then G's loss on a fresh ``D(fake)``).

This reference builds that meaning from the original program's own run, not from any rewrite:
every torch call is recorded (function, arguments, outputs, grad mode, each input tensor's
version and the call that made it). When a backward pass starts (``Tensor.backward``,
``torch.autograd.backward``, ``torch.autograd.grad``), the calls its roots depend on are walked;
a call is stale where an input is a leaf (a parameter, a buffer) changed in place since the call
(an optimizer step, a ``load_state_dict``), or the output of a stale call. The stale calls run
again, in order, on the current values (the others' outputs, and their graphs, are kept), and
the backward pass runs from the fresh roots. Afterwards the fresh values are copied into the
tensors the program holds (``loss_G.item()`` reads the recomputed loss, as in the rewrite that
rebinds it). Nothing is replayed where nothing is stale: a program without a step-order
conflict runs as written.

It does not fit (``unfit``, then no reference: the verdict is ``unproven``) where a stale call
wrote in place into a tensor the fresh forward does not make, where a non-leaf input was
changed in place since the call, or where the record grew past its limit. Random calls run
again draw other numbers than the rewrite's; such a difference shows as "not verified", never
as a false "verified".
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_flatten, tree_unflatten

LIMIT = 300_000  # calls recorded at most (the small programs the repair runs stay far below)

_MUTATING_DUNDERS = {"__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__",
                     "__ipow__", "__imod__", "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__"}

Key = Tuple[int, Any]  # (the call's index, the output's position or "arg0" for a write into the first argument)


class _Call:
    __slots__ = ("func", "flat", "spec", "inputs", "outputs", "grad", "inplace", "graded")

    def __init__(self, func, flat, spec, inputs, outputs, grad, inplace, graded=frozenset()) -> None:
        self.func, self.flat, self.spec, self.inputs, self.outputs, self.grad, self.inplace = \
            func, flat, spec, inputs, outputs, grad, inplace
        self.graded = graded  # the positions of the inputs that required grad


def _inplace(func) -> bool:
    name = getattr(func, "__name__", "")
    return name in _MUTATING_DUNDERS or (name.endswith("_") and not name.endswith("__"))


def _version(t: torch.Tensor) -> Optional[int]:
    try:
        return t._version
    except (RuntimeError, AttributeError):  # inference tensors have none
        return None


class RecomputeAfterStep(TorchFunctionMode):
    """Run a program with each backward pass's stale part of the forward run again first."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: List[_Call] = []
        self.producer: Dict[int, Key] = {}  # id(tensor) -> the call that last made or wrote it
        self.unfit: Optional[str] = None
        self.replays: List[str] = []  # what ran again, per backward pass that needed it
        self._stepping = 0
        self._hooks: list = []
        self._last: Dict[Key, torch.Tensor] = {}

    # ------------------------------------------------------------ entering
    def __enter__(self):
        self._hooks = [register_optimizer_step_pre_hook(self._step_starts),
                       register_optimizer_step_post_hook(self._step_ends)]
        return super().__enter__()

    def __exit__(self, *exc):
        for hook in self._hooks:
            hook.remove()
        self._hooks = []
        return super().__exit__(*exc)

    def _step_starts(self, *_: Any) -> None:
        self._stepping += 1  # an optimizer's own ops are no part of any forward

    def _step_ends(self, *_: Any) -> None:
        self._stepping = max(0, self._stepping - 1)

    # ------------------------------------------------------------ recording
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.Tensor.backward:
            return self._backward(func, [args[0]], args, kwargs)
        if func is torch.autograd.backward:
            tensors = args[0] if args else kwargs.get("tensors")
            roots = [tensors] if isinstance(tensors, torch.Tensor) else list(tensors)
            return self._backward(func, roots, args, kwargs, first=True)
        if func is torch.autograd.grad:
            outputs = args[0] if args else kwargs.get("outputs")
            roots = [outputs] if isinstance(outputs, torch.Tensor) else list(outputs)
            return self._backward(func, roots, args, kwargs, first=True)
        result = func(*args, **kwargs)
        if not self._stepping and self.unfit is None:
            self._record(func, args, kwargs, result)
        return result

    def _record(self, func, args, kwargs, result) -> None:
        if len(self.calls) >= LIMIT:
            self.unfit = f"more than {LIMIT} torch calls recorded"
            return
        flat, spec = tree_flatten((tuple(args), dict(kwargs)))
        # A parameter (a leaf that requires grad, or an ``nn.Parameter`` frozen with
        # ``requires_grad = False``, as a target network's) is a source: its value now is the
        # fresh forward's, whatever wrote it last (its init, a step, a load, a copy of another
        # network's weights).
        inputs = [(pos, t, _version(t), None if (t.is_leaf and t.requires_grad) or isinstance(t, torch.nn.Parameter)
                   else self.producer.get(id(t)))
                  for pos, t in enumerate(flat) if isinstance(t, torch.Tensor)]
        graded = frozenset(pos for pos, t, _, _ in inputs if t.requires_grad)
        outputs = [(pos, o) for pos, o in enumerate(tree_flatten(result)[0]) if isinstance(o, torch.Tensor)]
        index = len(self.calls)
        inplace = _inplace(func) and bool(args) and isinstance(args[0], torch.Tensor)
        self.calls.append(_Call(func, flat, spec, inputs, outputs, torch.is_grad_enabled(), inplace, graded))
        for pos, o in outputs:
            self.producer[id(o)] = (index, pos)
        if inplace and not any(o is args[0] for _, o in outputs):
            self.producer[id(args[0])] = (index, "arg0")

    # ------------------------------------------------------------ a backward pass
    def _backward(self, func, roots: List[torch.Tensor], args, kwargs, first: bool = False):
        fresh = self._recompute(roots) if self.unfit is None else None
        if not fresh:
            return func(*args, **kwargs)
        new_roots = [fresh.get(id(r), r) for r in roots]
        args = list(args)
        if func is torch.Tensor.backward:
            args[0] = new_roots[0]
        elif first and args:
            args[0] = new_roots[0] if isinstance(args[0], torch.Tensor) else type(args[0])(new_roots)
        else:
            key = "tensors" if func is torch.autograd.backward else "outputs"
            kwargs = {**kwargs, key: new_roots[0] if isinstance(kwargs[key], torch.Tensor) else new_roots}
        result = func(*args, **kwargs)
        self._copy_back()
        return result

    def _needed(self, roots: List[torch.Tensor], graded: bool = False) -> List[int]:
        """The calls the roots depend on; ``graded``: only through inputs that required grad
        (the calls the backward goes through)."""
        todo = [self.producer[id(r)][0] for r in roots if id(r) in self.producer]
        seen = set()
        while todo:
            i = todo.pop()
            if i in seen:
                continue
            seen.add(i)
            call = self.calls[i]
            todo += [prod[0] for pos, _, _, prod in call.inputs
                     if prod is not None and (not graded or pos in call.graded)]
        return sorted(seen)

    def _recompute(self, roots: List[torch.Tensor]) -> Optional[Dict[int, torch.Tensor]]:
        """The roots made again where any call they depend on is stale: id(root) -> fresh root."""
        needed = self._needed(roots)
        stale: Dict[int, bool] = {}
        for i in needed:
            call = self.calls[i]
            stale[i] = any((prod is not None and stale.get(prod[0], False))
                           or (prod is None and t.grad_fn is None and version is not None and _version(t) != version)
                           for _, t, version, prod in call.inputs)
        # Nothing to run again unless the backward goes through a stale call (a value taken off
        # one without grad, ``x.detach()``, is data to it: the program runs as written).
        through: Dict[int, bool] = {}
        for i in self._needed(roots, graded=True):
            call = self.calls[i]
            through[i] = any((prod is not None and pos in call.graded and through.get(prod[0], False))
                             or (prod is None and t.grad_fn is None and version is not None and _version(t) != version)
                             for pos, t, version, prod in call.inputs)
        if not any(through.values()):
            return None
        fresh: Dict[Key, torch.Tensor] = {}
        ran = []
        for i in needed:
            if not stale[i]:
                continue
            call = self.calls[i]
            flat = list(call.flat)
            for pos, t, version, prod in call.inputs:
                if prod is not None and prod in fresh:
                    flat[pos] = fresh[prod]
                elif prod is not None and stale.get(prod[0], False):
                    self.unfit = "a recomputed call reads a value its fresh forward did not make again"
                    return None
                elif t.grad_fn is not None and version is not None and _version(t) != version:
                    self.unfit = "a tensor of the forward was changed in place after the call that read it"
                    return None
            if call.inplace and not (call.inputs and call.inputs[0][0] == 0 and call.inputs[0][3] is not None
                                     and call.inputs[0][3] in fresh):
                self.unfit = (f"`{getattr(call.func, '__name__', call.func)}` wrote in place into a tensor "
                              "the fresh forward does not make")
                return None
            a, kw = tree_unflatten(flat, call.spec)
            with torch.set_grad_enabled(call.grad):
                out = call.func(*a, **kw)
            for (pos, _), o in zip(call.outputs, [o for o in tree_flatten(out)[0] if isinstance(o, torch.Tensor)]):
                fresh[(i, pos)] = o
            if call.inplace:
                fresh[(i, "arg0")] = a[0]
            ran.append(i)
        self._last = fresh
        self.replays.append(f"{len(ran)} of {len(needed)} calls run again after the step")
        return {id(r): fresh[self.producer[id(r)]] for r in roots
                if id(r) in self.producer and self.producer[id(r)] in fresh}

    def _copy_back(self) -> None:
        """The fresh values into the tensors the program holds (it reads them as the rewrite's,
        which rebinds their names)."""
        fresh, self._last = self._last, {}
        with torch.no_grad():
            for (index, pos), new in fresh.items():
                if pos == "arg0":
                    continue
                for p, old in self.calls[index].outputs:
                    if p == pos and old is not new and old.shape == new.shape and old.dtype == new.dtype:
                        old.data.copy_(new.detach())
