"""What a run is compared against when the original cannot run: the references.

- ``saved`` errors (a tensor saved for backward, modified in place): the **snapshot oracle**.
  Every tensor autograd saves is copied at save time, so backward sees the values the forward
  really used: the gradient of what the program computed. Cross-checked with
  ``torch.func.functionalize`` for module targets.
- ``leaf`` errors (an in-place op on a leaf that requires grad): the **no-grad meaning**. The
  offending in-place updates are applied outside autograd, as under ``torch.no_grad()``: the
  meaning of weight surgery, init, manual SGD, EMA updates and state resets. It does not fit
  when the leaf was already read by the computation being differentiated (used since the last
  backward, and a later backward goes through that read: a forward kept only for a printed
  score is no part of it), when the update's right-hand side requires grad and a later backward goes
  through the leaf (``embeds += visual.mean() * 0.``), or when an in-place step of the
  computation (``F.relu(x, inplace=True)``) ran on a leaf whose ``.grad`` the program reads.
  Then the **copy meaning** is tried: each such update made out of place on a new tensor (the
  leaf keeps its value, the gradient goes through the update). It does not fit where the
  program reads the leaf itself afterwards, reads the new tensor's ``.grad``, or the update has
  no out-of-place form; with neither meaning, the verdict is ``unproven``.
- ``view`` errors (a view PyTorch refuses to modify in place): **writes into copies**
  (``view_copies``): every refused view is replaced by a copy of itself where it is made, the
  meaning of IPF006's fix. It does not fit where the tensor viewed is read after a write into
  the copy (in place it would have seen it): then **views allowed** (ordinary views of the same
  memory: the writes reach the tensor viewed), and ``unproven`` where that fails too. Saved
  tensors are snapshotted in both: a copy written again after autograd saved it, or a write
  reaching what autograd saved of the tensor viewed, is a saved-tensor conflict of its own,
  judged the oracle's way.

The same hooks count what a run saves for backward (the cost columns).
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import linecache
import sys
import types
import weakref
from typing import Dict, List, Optional, Tuple

import torch
from torch.autograd.function import BackwardCFunction
from torch.overrides import TorchFunctionMode

from codemod.runtime.ctx_attributes import snapshot_ctx_attributes
from codemod.runtime.dropout_draws import SameDropoutDraws
from codemod.runtime.handed_inputs import HandedInputs, user_frame, writer_scope
from codemod.runtime.own_gradients import OwnGradients


class Mode(str, enum.Enum):
    PLAIN = "plain"  # the program as written
    SNAPSHOT = "snapshot"  # the snapshot oracle
    NO_GRAD_LEAVES = "no-grad-leaves"  # the no-grad meaning of in-place updates of leaves
    COPY_LEAVES = "copy-leaves"  # the copy meaning: the update makes a new tensor, the leaf keeps its value
    VIEW_COPIES = "view-copies"  # refused views replaced by copies (``view_copies``)
    VIEWS_ALLOWED = "views-allowed"  # multi-output views replaced by ordinary views (``view_copies``)
    RECOMPUTE = "recompute"  # the stale part of the forward run again after a step (``recompute``)


REFERENCE_NAMES = {
    Mode.SNAPSHOT: "oracle",
    Mode.NO_GRAD_LEAVES: "no-grad meaning",
    Mode.COPY_LEAVES: "copy meaning",
    Mode.VIEW_COPIES: "writes into copies",
    Mode.VIEWS_ALLOWED: "views allowed",
    Mode.RECOMPUTE: "recompute meaning",
}


class SavedTensors:
    """Saved-tensor hooks that count the bytes autograd keeps for backward and, for the
    oracle, keep a copy instead of the tensor. Plain runs keep the tensor and re-check its
    version at unpack (autograd skips its own check while any such hooks are installed)."""

    def __init__(self, snapshot: bool) -> None:
        self.snapshot = snapshot
        self.bytes = 0
        self._seen: set = set()

    def _pack(self, t: torch.Tensor):
        key = _saved_key(t)
        if key not in self._seen:
            self._seen.add(key)
            self.bytes += _saved_bytes(t)
        if self.snapshot:
            return t.detach().clone()
        maker = t.grad_fn.name() if t.grad_fn is not None else ("a leaf" if t.requires_grad else "no graph")
        try:
            return (t.detach(), t._version, maker)
        except RuntimeError:  # inference tensors have no version counter
            return (t, None, maker)

    def _unpack(self, packed):
        if self.snapshot:
            # A custom Function's backward may write into what it unpacks (``grad_x *= g``): it
            # gets a copy, so a later backward through the graph sees the values saved.
            node = torch._C._current_autograd_node()
            return packed.clone() if isinstance(node, BackwardCFunction) else packed
        tensor, version, maker = packed
        if version is not None and tensor._version != version:
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: a tensor of shape {tuple(tensor.shape)} (made by {maker}) was saved "
                f"at version {version} and is at version {tensor._version}"
            )
        return tensor

    def hooks(self):
        saved = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        if not self.snapshot:
            return saved
        stack = contextlib.ExitStack()  # the oracle: ctx attributes as the forward left them too
        stack.enter_context(saved)
        stack.enter_context(snapshot_ctx_attributes())
        return stack


def _saved_key(t: torch.Tensor) -> tuple:
    """What identifies a saved tensor's memory, for counting it once. Sparse, MKL-DNN and
    wrapper-subclass tensors have no storage (``data_ptr()`` raises "Cannot access data
    pointer of Tensor that doesn't have storage"): they count by identity."""
    try:
        return (t.data_ptr(), t.dtype, tuple(t.shape), tuple(t.stride()), t.device)
    except (RuntimeError, NotImplementedError, AttributeError):
        return ("no storage", id(t))


def _saved_bytes(t: torch.Tensor) -> int:
    """The bytes a saved tensor keeps: its elements, or a sparse tensor's values and indices."""
    try:
        if t.layout == torch.sparse_coo:
            return sum(x.numel() * x.element_size() for x in (t._values(), t._indices()))
        if t.layout in (torch.sparse_csr, torch.sparse_csc, torch.sparse_bsr, torch.sparse_bsc):
            compressed, plain = ((t.crow_indices(), t.col_indices()) if t.layout in (torch.sparse_csr, torch.sparse_bsr)
                                 else (t.ccol_indices(), t.row_indices()))
            return sum(x.numel() * x.element_size() for x in (t.values(), compressed, plain))
        return t.numel() * t.element_size()
    except (RuntimeError, NotImplementedError, AttributeError):
        return 0


_INPLACE_DUNDERS = {"__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__",
                    "__imod__", "__ipow__", "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__",
                    "__imatmul__"}


def is_inplace_call(name: str, kwargs: dict) -> bool:
    return (name in _INPLACE_DUNDERS or kwargs.get("inplace") is True
            or (name.endswith("_") and not name.startswith("_")))


@dataclasses.dataclass
class LeafUpdate:
    line: str  # "model.py:12"
    op: str


class LeafSources:
    """What each tensor of a run was computed from: the ids of the leaves (those a
    :class:`LeafWatch` keeps) it was computed from with grad on, ``detach`` and ``.grad``
    cutting the chain (the watch derives nothing through them: ``_CUTS``). An update whose
    operands (values, index, mask) came from the leaf itself is a step of the computation,
    ``R[abs(R) < eps] = 0``, not a state set."""

    def __init__(self, leaf_ids: set) -> None:
        self._leaf_ids = leaf_ids  # the watch's ids of its leaves (shared: it grows with the run)
        # id(tensor) -> (the tensor, ids of the leaves it was computed from)
        self._derived: Dict[int, Tuple["weakref.ref[torch.Tensor]", frozenset]] = {}

    def of(self, t: torch.Tensor) -> frozenset:
        """ids of the leaves ``t`` was computed from (itself, where it is one, or its base)."""
        found = self._derived.get(id(t))
        own = found[1] if found is not None and found[0]() is t else frozenset()
        base = t._base if t._base is not None else t
        if id(base) in self._leaf_ids:
            own = own | {id(base)}
        elif base is not t:
            own = own | self.of(base)
        return own

    def derive(self, tensors, result) -> None:
        """``result`` of a call on ``tensors``: computed from what they were."""
        sources = frozenset().union(*(self.of(t) for t in tensors)) if tensors else frozenset()
        if not sources:
            return
        for r in _flat([result]):
            if isinstance(r, torch.Tensor) and id(r) not in self._leaf_ids:
                self._derived[id(r)] = (weakref.ref(r), sources)
        if len(self._derived) > 8192:  # drop the dead
            self._derived = {k: v for k, v in self._derived.items() if v[0]() is not None}


class LeafWatch(TorchFunctionMode):
    """Sees every torch call of a run:

    - keeps the leaves that require grad in the order they first appear (a stable key for a
      function target's leaves: ``leaf#0`` is the first one created, whatever the graph's
      shape; ``h = b + h`` and ``h += b`` name the same leaves);
    - with ``no_grad_leaves``, applies in-place updates of such leaves outside autograd, and
      says where the no-grad meaning does not fit: the leaf was already read by the
      computation being differentiated (a later backward goes through that read); the
      update's right-hand side requires grad (``embeds += visual.mean() * 0.``: the program
      differentiates through it); or the update is a step of the computation (``x.sigmoid_()``,
      an input's mask in a forward) and the leaf's ``.grad`` is read afterwards;
    - with ``copy_leaves``, makes each such update out of place (``x.add_(y)`` -> ``x.add(y)``,
      ``inplace=True`` -> ``False``): a new tensor takes the update, the leaf keeps its value
      (``y = F.relu(x)``, ``embeds = embeds + ...``). It does not fit where the program reads
      the leaf itself afterwards (in place it would see the update) or the update has no
      out-of-place form (``zero_``, ``x[i] = v``).
    """

    def __init__(self, no_grad_leaves: bool = False, copy_leaves: bool = False) -> None:
        super().__init__()
        self.no_grad_leaves = no_grad_leaves
        self.copy_leaves = copy_leaves
        self._stepped: Dict[int, str] = {}  # id(leaf) -> where a computation step updated it
        self._copied: Dict[int, str] = {}  # id(leaf) -> where its update went to a copy
        self._written = WrittenElements()  # what those updates wrote, for the reads of the leaf's views
        self._copies: Dict[int, Tuple["weakref.ref[torch.Tensor]", str]] = {}  # the copies, for their .grad reads
        self._through: Dict[int, str] = {}  # id(leaf) -> where an update whose right-hand side requires grad
        # copy meaning of an update with no out-of-place form: id(leaf) -> (leaf, its clone), which
        # every later read of the leaf (but its .grad) sees: ``x = x.clone(); x[i] = v``
        self._clones: Dict[int, Tuple["weakref.ref[torch.Tensor]", torch.Tensor]] = {}
        # reshapes made out of place (``RESHAPES``): id(view) -> (the view, its reshaped tensor),
        # which every later read of the view (not of its .grad) sees
        self._reshaped: Dict[int, Tuple["weakref.ref[torch.Tensor]", torch.Tensor]] = {}
        self.leaves: List[torch.Tensor] = []
        self.read_versions: Dict[int, Optional[int]] = {}  # leaf index -> its version when first read
        self._data_aliases: Dict[int, Tuple["weakref.ref[torch.Tensor]", int]] = {}  # ``p.data`` -> p's index
        self._data_written: set = set()  # indices of leaves written through ``.data`` after a read
        self._stepped_after: Dict[int, int] = {}  # leaf index -> backwards seen when last written outside autograd
        self._ids: set = set()
        self._sources = LeafSources(self._ids)  # what each tensor was computed from
        self._index: Dict[int, int] = {}
        self._recorded: List[weakref.ref] = []  # results recorded since the last backward
        self._reached: Optional[set] = None  # ids of the leaves their graphs reach (cached)
        # id(leaf) -> (why, the graph nodes that read it before an update): unfit once a backward reaches one
        self._early: Dict[int, Tuple[str, list]] = {}
        # (where, the node of a view of a leaf an update wrote, ``x = coords[:, :1]; x *= 2``): a
        # backward of the program through it differentiates through the update (``_on_path``)
        self._on_path: List[Tuple[str, object]] = []
        self.harness_backward = False  # the harness's backward of a function's outputs: not the program's
        self.updates: List[LeafUpdate] = []
        self.unfit: Optional[str] = None
        self.exempt: set = set()  # ids of leaves the harness made (inputs): not the program's
        self.backwards = 0  # backward/grad calls seen (the program's own, then the harness's)
        self.own_gradients = OwnGradients()  # what the program's torch.autograd.grad returned, and made of it
        self._handed = HandedInputs()  # leaves a function was handed and updated: steps once it computes with them

    def note(self, t) -> None:
        if not isinstance(t, torch.Tensor) or id(t) in self._ids:
            return
        if t._base is not None and t._base.requires_grad:
            return  # a view made under no_grad of such a tensor: an alias of it, not a leaf of its own
        try:
            leaf = t.is_leaf and t.requires_grad
        except RuntimeError:
            return
        if leaf:
            self._ids.add(id(t))
            self._index[id(t)] = len(self.leaves)
            self.leaves.append(t)

    def changed(self) -> List[int]:
        """Indices of the leaves the run changed in place after the computation first read
        them (an optimizer step, a manual update, ``p.data -= ...``): state a rewrite could
        change. Updates before the first read (initialising, ``w += 1`` right after it is
        made) are how the leaf was made: what reads it shows them."""
        return [i for i, v in self.read_versions.items()
                if version_of(self.leaves[i]) != v or i in self._data_written]

    def _track(self, func, name: str, args, kwargs, tensors) -> None:
        """First reads of leaves, and writes through their ``.data`` after one."""
        if name == "__get__":
            return
        written = set()
        if is_inplace_call(name, kwargs) or (name.startswith("_foreach_") and name.endswith("_")):
            targets = list(_flat([args[0]])) if args else []
            for t in targets:
                if not isinstance(t, torch.Tensor):
                    continue
                base = t._base if t._base is not None else t
                written.add(id(base))
                alias = self._data_aliases.get(id(base))
                if alias is not None and alias[0]() is base and alias[1] in self.read_versions:
                    self._data_written.add(alias[1])
                if not torch.is_grad_enabled() or (alias is not None and alias[0]() is base):
                    # written outside autograd (an optimizer's step): after which backward
                    i = alias[1] if alias is not None and alias[0]() is base else self._index.get(id(base))
                    if i is not None:
                        self._stepped_after[i] = self.backwards
        for t in tensors:
            base = t._base if t._base is not None else t
            i = self._index.get(id(base))
            if i is not None and i not in self.read_versions and id(base) not in written:
                self.read_versions[i] = version_of(base)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if (self._clones or self._reshaped) and not _reads_grad(func, name):
            args, kwargs = self._swap(args), self._swap(kwargs)
        tensors = [a for a in _flat(args) if isinstance(a, torch.Tensor)]
        tensors += [v for v in _flat(kwargs.values()) if isinstance(v, torch.Tensor)]
        for t in tensors:
            self.note(t)
        if getattr(func, "__module__", "") == "torch.nn.init":
            return func(*args, **kwargs)  # turns grad off itself: neither an error nor a read
        reshaped = _reshape(self, func, name, args, kwargs)
        if reshaped is not None:
            return reshaped
        self._track(func, name, args, kwargs, tensors)
        if self.unfit is None and (self._stepped or self._copied or self._copies):
            self._check_read(func, name, args, kwargs, tensors)
        leaf = _updated_leaf(args, kwargs)
        if ((self.no_grad_leaves or self.copy_leaves) and leaf is not None and torch.is_grad_enabled()
                and id(leaf) not in self.exempt and name not in _FLAGS and is_inplace_call(name, kwargs)):
            where = _user_line()
            self.updates.append(LeafUpdate(where, name))
            if self.copy_leaves:
                return self._copy(func, name, args, kwargs, leaf, where)
            if self.unfit is None and self._read_by_graph(leaf):
                # Read before the update by a graph still alive: a meaning is not known only where
                # a later backward goes through that read (a forward kept for its `.item()` or
                # `argmax` and then dropped is no part of what is differentiated).
                readers = self._readers(leaf)
                values = [t for t in tensors if args and t is not args[0] and not _is_view_of(t, leaf)
                          and t.grad_fn is not None]
                if values and id(leaf) in _leaves_reached([t.grad_fn for t in values]):
                    readers = None  # the update's own value read the leaf (`w.div_(w.norm())`): at once
                message = (f"{where}: `{name}` updates a leaf that the computation being "
                           "differentiated already read; its meaning is not known")
                if readers is None:
                    self.unfit = message
                else:
                    self._early[id(leaf)] = (message, self._early.get(id(leaf), ("", []))[1] + readers)
            operands = [t for t in tensors if t is not args[0] and not _is_view_of(t, leaf)] if args else tensors
            if any(t.requires_grad for t in operands):
                self._through.setdefault(id(leaf), f"{where}: `{name}`")
            if _post_step(self, leaf):  # part of the update of a state (a projection after the optimizer's step)
                self.updates[-1] = LeafUpdate(where, f"{name}, after a backward filled the leaf's .grad and a "
                                                     "write outside autograd stepped it: an update of its state")
            elif _computation_step(name, kwargs):
                self._stepped.setdefault(id(leaf), f"{where}: `{name}`")
            elif any(id(leaf) in self._sources.of(t) for t in operands):
                self._stepped.setdefault(id(leaf), f"{where}: `{name}`, with operands computed from the leaf itself")
            else:
                self._handed.updated(leaf, f"{where}: `{name}`")
            with torch.no_grad():
                result = func(*args, **kwargs)
            target = args[0] if args else None
            if isinstance(target, torch.Tensor) and target is not leaf and target.grad_fn is not None:
                # read after the write: a view's node is made anew once its version moved
                self._on_path = self._on_path[-63:] + [(f"{where}: `{name}`", target.grad_fn)]
            return result
        if name in ("backward", "grad") and self._early and self.unfit is None:
            nodes = _nodes_reached([t.grad_fn for t in tensors if t.grad_fn is not None])
            hit = next((message for message, readers in self._early.values() if any(r in nodes for r in readers)), None)
            if hit is not None:
                self.unfit = f"{hit} (a backward at {_user_line()} goes through that read)"
        if name in ("backward", "grad") and self._on_path and self.unfit is None and not self.harness_backward:
            self.unfit = _on_path(self._on_path, tensors)
        if name in ("backward", "grad") and self._through and self.unfit is None:
            reached = _leaves_reached([t.grad_fn for t in tensors if t.grad_fn is not None])
            # a backward started at the leaf itself (``state.loss.backward()`` on a leaf loss the
            # terms were summed into) differentiates through it as well
            reached |= {id(t._base if t._base is not None else t) for t in _flat([args[0]] if args else [])
                        if isinstance(t, torch.Tensor)}
            hit = next((where for key, where in self._through.items() if key in reached), None)
            if hit is not None:
                self.unfit = (f"{hit}: the update's right-hand side requires grad and a backward "
                              f"({_user_line()}) differentiates through the leaf it updated: the program "
                              "means the gradient to go through the update (the copy meaning)")
        result = func(*args, **kwargs)
        self.own_gradients.seen(name, tensors, result, program=not self.harness_backward)
        if name in ("backward", "grad"):
            self.backwards += 1
            self._recorded.clear()
            self._reached = None
        elif torch.is_grad_enabled() and self.no_grad_leaves:
            if any(isinstance(r, torch.Tensor) and r.requires_grad for r in _flat([result])):
                self._stepped.update(self._handed.computed_with(tensors))
            for r in _flat([result]):
                if isinstance(r, torch.Tensor) and r.grad_fn is not None:
                    self._recorded.append(weakref.ref(r))
                    self._reached = None
            if len(self._recorded) > 4096:  # a long forward without backward: drop the dead
                self._recorded = [w for w in self._recorded if w() is not None]
            if name not in _CUTS:
                self._sources.derive(tensors, result)
        for r in _flat([result]):
            self.note(r)
        if name == "__get__" and isinstance(result, torch.Tensor) and args and id(args[0]) in self._index \
                and getattr(getattr(func, "__self__", None), "__name__", "") == "data":
            self._data_aliases[id(result)] = (weakref.ref(result), self._index[id(args[0])])
        return result

    def _check_read(self, func, name: str, args, kwargs, tensors) -> None:
        """After a step of the computation made in place on a leaf (no-grad meaning), a read of
        the leaf's ``.grad``; after an update that went to a copy (copy meaning), a read of
        the leaf itself: each tells that meaning does not fit."""
        if name == "__get__":
            attribute = getattr(getattr(func, "__self__", None), "__name__", "")
            if attribute == "grad" and args and id(args[0]) in self._stepped:
                self.unfit = (f"{self._stepped[id(args[0])]} is a step of the computation on a leaf whose "
                              f".grad the program reads ({_user_line()}): the gradient it reads goes "
                              "through the update (the copy meaning)")
            copy = self._copies.get(id(args[0])) if attribute == "grad" and args else None
            if copy is not None and copy[0]() is args[0]:
                self.unfit = (f"{_user_line()} reads the .grad of what {copy[1]} updated: in place that is "
                              "the leaf's gradient, on a copy (not a leaf) there is none")
            return
        if name in ("backward", "grad") or not self._copied:
            return
        for t in tensors:
            base = t._base if t._base is not None else t
            if id(base) in self._copied and self._written.overlaps(t, base):
                self.unfit = (f"{_user_line()} reads the leaf that {self._copied[id(base)]} updated: in "
                              "place it sees the update, the copy meaning would not")
                return

    def _copy(self, func, name: str, args, kwargs, leaf: torch.Tensor, where: str):
        """The copy meaning of one update: its out-of-place form, on a new tensor; where it has
        none (``x[i] = v``, ``fill_``, ``copy_``), the update of a clone that every later read
        of the leaf sees (``x = x.clone()`` before it); for a leaf the writer was handed, always."""
        outplace = getattr(torch.Tensor, name[:-1], None) if name.endswith("_") and not name.startswith("_") else None
        handed = writer_scope(leaf) is not None
        if kwargs.get("inplace") is True and not handed:
            result = func(*args, **dict(kwargs, inplace=False))
        elif outplace is not None and callable(outplace) and not handed:
            result = outplace(*args, **kwargs)
        else:
            target = args[0] if args else None
            clone = leaf.clone() if isinstance(target, torch.Tensor) and (target is leaf or target._base is leaf) else None
            if clone is not None and clone.stride() == leaf.stride():  # views of the leaf map onto it
                self._clones[id(leaf)] = (weakref.ref(leaf), clone)
                return func(*self._swap(args), **self._swap(kwargs))
            if self.unfit is None:
                self.unfit = f"{where}: `{name}` has no out-of-place form that leaves the leaf as it was"
            with torch.no_grad():
                return func(*args, **kwargs)
        self._copied.setdefault(id(leaf), f"{where}: `{name}`")
        self._written.mark(leaf, args[0] if args else leaf)
        if isinstance(result, torch.Tensor):
            self._copies[id(result)] = (weakref.ref(result), f"{where}: `{name}`")
        return result

    def _swap(self, obj):
        """``obj`` with each leaf that has a clone (and each view of one) replaced by the clone,
        and each view reshaped out of place (``_reshape``) by its reshaped tensor."""
        if isinstance(obj, torch.Tensor) and self._reshaped:
            found = self._reshaped.get(id(obj))
            while found is not None and found[0]() is obj:
                obj = found[1]
                found = self._reshaped.get(id(obj))
        if isinstance(obj, torch.Tensor):
            base = obj._base if obj._base is not None else obj
            found = self._clones.get(id(base))
            if found is None or found[0]() is not base:
                return obj
            clone = found[1]
            if obj is base:
                return clone
            with torch._C.DisableTorchFunction():
                return clone.as_strided(obj.size(), obj.stride(), obj.storage_offset() - base.storage_offset())
        if isinstance(obj, (list, tuple)) and type(obj) in (list, tuple):
            return type(obj)(self._swap(o) for o in obj)
        if isinstance(obj, dict) and type(obj) is dict:
            return {k: self._swap(v) for k, v in obj.items()}
        return obj

    def _readers(self, leaf: torch.Tensor) -> Optional[list]:
        """The graph nodes of the recorded tensors still alive that read ``leaf`` (None: too
        many to follow; then the read counts at once)."""
        alive = [t for t in (r() for r in self._recorded) if t is not None and t._base is not leaf]
        if len(alive) > 256:
            return None
        return [t.grad_fn for t in alive if t.grad_fn is not None and id(leaf) in _leaves_reached([t.grad_fn])]

    def _read_by_graph(self, leaf: torch.Tensor) -> bool:
        """A tensor recorded since the last backward, still alive and not a view of ``leaf``,
        has ``leaf`` in its graph: the differentiated computation read it before this update.
        (A read whose result was dropped, ``w[i].detach()``, or one only through the update's
        own target, ``w[:, j] -= d``, leaves nothing that backward could see.)"""
        if self._reached is None:
            alive = [t for t in (r() for r in self._recorded) if t is not None and t._base is not leaf]
            self._recorded = [weakref.ref(t) for t in alive]
            self._reached = _leaves_reached([t.grad_fn for t in alive])
        return id(leaf) in self._reached


def _post_step(watch: "LeafWatch", leaf: torch.Tensor) -> bool:
    """Whether an update of ``leaf`` comes right after its step: a backward of the program
    filled its ``.grad``, a write outside autograd (the optimizer's step, ``p.data``) changed it
    after that backward, and nothing recorded since reads it. The leaf is then state being
    updated (``w.relu_()``, ``w.div_(w.norm())`` projecting it after the step): a later forward
    reads the projected value as the leaf, whose gradient is the leaf's own, not one through
    the update. Before any such step (``w.relu_()`` opening the first forward) it is not."""
    i = watch._index.get(id(leaf))
    if i is None or watch.backwards == 0 or watch._stepped_after.get(i) != watch.backwards:
        return False
    if leaf.grad is None or watch._read_by_graph(leaf):
        return False
    return True


def _reshape(watch: "LeafWatch", func, name: str, args, kwargs) -> Optional[torch.Tensor]:
    """A reshape made in place (``RESHAPES``) on a view of a leaf that requires grad, with
    grad on: made out of place, and every later read of the view sees the result (None for
    any other call). It changes no value: the reference has no meaning to choose for it."""
    if name not in RESHAPES or not (watch.no_grad_leaves or watch.copy_leaves) or not torch.is_grad_enabled():
        return None
    target = args[0] if args else None
    leaf = _updated_leaf(args, kwargs)
    if leaf is None or target is leaf or id(leaf) in watch.exempt or not isinstance(target, torch.Tensor):
        return None
    outplace = getattr(torch.Tensor, name[:-1])
    result = outplace(*args, **kwargs)
    watch._reshaped[id(target)] = (weakref.ref(target), result)
    watch.updates.append(LeafUpdate(_user_line(), f"{name}, a reshape made out of place: it changes no value"))
    watch._sources.derive([target], result)
    if torch.is_grad_enabled() and result.grad_fn is not None:
        watch._recorded.append(weakref.ref(result))
        watch._reached = None
    return result


def _on_path(written: List[Tuple[str, object]], tensors) -> Optional[str]:
    """Why the no-grad meaning does not fit, where a backward of ``tensors`` runs through the node
    of a view an update wrote: the gradient from the leaf goes through that update (the
    derivative of ``x *= 2 * math.pi`` carries the factor); else None."""
    nodes = _nodes_reached([t.grad_fn for t in tensors if t.grad_fn is not None])
    hit = next((where for where, node in written if node in nodes), None)
    if hit is None:
        return None
    return (f"{hit} updates a view of a leaf that a backward ({_user_line()}) differentiates "
            "through: the gradient from the leaf goes through the update (the copy meaning)")


class WrittenElements:
    """The elements of each leaf's storage that updates wrote (the copy meaning): a read of a view
    that misses them (``t = coords[:, 1:]`` beside ``x = coords[:, :1]``) sees the same values
    whether the update went in place or to a copy. A view of another element size (``c.real`` of
    a complex leaf, ``x.view(torch.int32)``) counts its strides and offset in its own elements:
    its bytes are mapped onto the leaf's elements (each one it touches at all)."""

    LIMIT = 1 << 26  # elements (bytes, for a view of another element size): a larger leaf counts as written everywhere

    def __init__(self) -> None:
        self._masks: Dict[int, torch.Tensor] = {}  # id(leaf) -> bool per element of its storage
        self._whole: set = set()  # ids of leaves written everywhere

    def mark(self, leaf: torch.Tensor, target) -> None:
        with torch._C.DisableTorchFunction():
            unit = max(leaf.element_size(), 1)
            size = -(-leaf.untyped_storage().nbytes() // unit)
            if not isinstance(target, torch.Tensor) or target is leaf or target._base is not leaf or size > self.LIMIT:
                self._whole.add(id(leaf))
                return
            mask = self._masks.get(id(leaf))
            if mask is None:
                mask = self._masks[id(leaf)] = torch.zeros(size, dtype=torch.bool, device="cpu")
            try:
                if target.element_size() == unit:
                    mask.as_strided(target.size(), target.stride(), target.storage_offset()).fill_(True)
                else:
                    mask |= self._covered(target, unit, size)
            except RuntimeError:
                self._whole.add(id(leaf))

    def overlaps(self, t: torch.Tensor, base: torch.Tensor) -> bool:
        """Whether a read of ``t`` (``base`` or a view of it) covers an element an update wrote."""
        mask = self._masks.get(id(base))
        if t is base or id(base) in self._whole or mask is None:
            return True
        with torch._C.DisableTorchFunction():
            try:
                unit = max(base.element_size(), 1)
                if t.element_size() == unit:
                    return bool(mask.as_strided(t.size(), t.stride(), t.storage_offset()).any())
                return bool((mask & self._covered(t, unit, mask.numel())).any())
            except RuntimeError:
                return True

    def _covered(self, view: torch.Tensor, unit: int, size: int) -> torch.Tensor:
        """The leaf's elements (``unit`` bytes each, ``size`` of them) that any byte of ``view``
        lies in; a RuntimeError where that is too large to map or out of the storage."""
        width = view.element_size()
        if size * unit > self.LIMIT:
            raise RuntimeError("too large to map bytes")
        touched = torch.zeros(size * unit, dtype=torch.bool, device="cpu")
        touched.as_strided((*view.size(), width), (*(s * width for s in view.stride()), 1),
                           view.storage_offset() * width).fill_(True)
        return touched.view(size, unit).any(dim=1)


# In-place steps of a computation (activations, dropout): on a leaf whose gradient the program
# reads, the gradient goes through them. Updates (``add_``, ``mul_``, ``copy_``, ``zero_``,
# ``x[i] = v``, ``clamp_``) are what the no-grad meaning is for.
_STEPS = {"relu_", "relu6_", "leaky_relu_", "elu_", "selu_", "celu_", "rrelu_", "gelu_", "silu_", "mish_",
          "hardtanh_", "hardswish_", "hardsigmoid_", "threshold_", "sigmoid_", "tanh_", "exp_", "log_",
          "log1p_", "expm1_", "sqrt_", "rsqrt_", "square_", "abs_", "sin_", "cos_", "erf_", "softplus_",
          "dropout_", "alpha_dropout_", "feature_alpha_dropout_", "logit_", "reciprocal_"}


_FLAGS = {"requires_grad_", "share_memory_", "retain_grad"}  # change no value: no meaning to choose

# Reshapes made in place: they change no value, only the shape (and strides) the tensor shows, so
# on a view of a leaf there is no meaning to choose: the same reshape out of place, seen by every
# later read of that tensor (``rho.unsqueeze_(2)`` -> ``rho = rho.unsqueeze(2)``).
RESHAPES = {"unsqueeze_", "squeeze_", "transpose_", "t_", "swapdims_", "swapaxes_"}


def _reads_grad(func, name: str) -> bool:
    """``x.grad`` (the leaf's own gradient), a backward or a grad call: never swapped for a clone."""
    if name in ("backward", "grad"):
        return True
    return name == "__get__" and getattr(getattr(func, "__self__", None), "__name__", "") in ("grad", "is_leaf", "data")


_CUTS = {"__get__", "detach", "detach_", "backward", "grad"}  # results not computed from the tensor read


def _computation_step(name: str, kwargs: dict) -> bool:
    return kwargs.get("inplace") is True or name in _STEPS


def _is_view_of(t: torch.Tensor, leaf: torch.Tensor) -> bool:
    return t is leaf or t._base is leaf


def version_of(t: torch.Tensor) -> Optional[int]:
    """``t._version``; None for inference tensors, which have no version counter."""
    try:
        return t._version
    except RuntimeError:
        return None


def _updated_leaf(args: tuple, kwargs: dict) -> Optional[torch.Tensor]:
    """The leaf that requires grad an in-place call writes: its first argument (``tensor=`` for
    ``nn.init`` style calls), or the base of a view (``w[:, j] -= d``, ``b = bias.view(...)``)."""
    target = args[0] if args else kwargs.get("tensor", kwargs.get("input", kwargs.get("self")))
    if not isinstance(target, torch.Tensor):
        return None
    try:
        base = target._base if target._base is not None else target
        return base if base.is_leaf and base.requires_grad else None
    except RuntimeError:
        return None


def _nodes_reached(roots: list) -> set:
    """The graph nodes that backward from ``roots`` runs through."""
    seen: set = set()
    stack = [r for r in roots if r is not None]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        stack.extend(n for n, _ in node.next_functions if n is not None)
    return seen


def _leaves_reached(roots: list) -> set:
    """ids of the leaves whose ``AccumulateGrad`` nodes the graphs of ``roots`` reach."""
    variables = (getattr(node, "variable", None) for node in _nodes_reached(roots))
    return {id(v) for v in variables if isinstance(v, torch.Tensor)}


def _flat(items):
    for item in items:
        if isinstance(item, (list, tuple)):
            yield from _flat(item)
        elif isinstance(item, dict):
            yield from _flat(list(item.values()))
        else:
            yield item


def _user_line() -> str:
    """``file:line`` of the innermost frame outside torch and this tool."""
    frame = user_frame()
    if frame is None:
        return "?"
    name = frame.f_code.co_filename
    return f"{name.rsplit('/', 1)[-1]}:{frame.f_lineno} `{linecache.getline(name, frame.f_lineno).strip()}`"


@contextlib.contextmanager
def deterministic(device: str):
    """Deterministic kernels, the target's tensors made on ``device``; off the CPU, out-of-place
    dropout drawing as the in-place one does (``dropout_draws``: a fused kernel draws otherwise)."""
    previous = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        with torch.device(device), (SameDropoutDraws() if device != "cpu" else contextlib.nullcontext()):
            yield
    finally:
        torch.use_deterministic_algorithms(previous)


class FunctionalizeWatch(TorchFunctionMode):
    """What ``torch.func.functionalize`` (under ``grad``) does not follow, seen while it runs:
    a ``.data`` read or write (it differentiates through it), an in-place write with grad off
    or into a detached alias (it drops the gradient through the tensor written), a gradient
    hook (it never calls it), a read of ``.requires_grad``, ``.grad_fn`` or ``.is_leaf`` (no tensor requires grad there). Where one ran, its gradients are not the program's: the
    cross-check does not apply. ``why`` names the first one and its line."""

    def __init__(self) -> None:
        super().__init__()
        self.why: Optional[str] = None
        self._detached: Dict[int, "weakref.ref[torch.Tensor]"] = {}  # detached aliases, by id

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if self.why is None:
            self._look(func, name, args, kwargs)
        result = func(*args, **kwargs)
        if name in ("detach", "detach_") or (args and _in_set(self._detached, args[0])):
            for r in _flat([result]):  # a detached alias, and what is taken from it
                if isinstance(r, torch.Tensor):
                    self._detached[id(r)] = weakref.ref(r)
        return result

    def _look(self, func, name: str, args, kwargs) -> None:
        if name in ("__get__", "__set__") and getattr(getattr(func, "__self__", None), "__name__", "") == "data":
            self.why = f"the forward reads or sets `.data` ({_user_line()}), which functionalize differentiates through"
        elif name == "register_hook":
            self.why = f"the forward registers a gradient hook ({_user_line()}), which functionalize never calls"
        elif name == "__get__" and not _torch_asks() and \
                getattr(getattr(func, "__self__", None), "__name__", "") in ("requires_grad", "grad_fn", "is_leaf"):
            attribute = func.__self__.__name__
            self.why = (f"the forward reads `.{attribute}` ({_user_line()}), which under functionalize says no "
                        "tensor requires grad")
        elif is_inplace_call(name, kwargs) and args and isinstance(args[0], torch.Tensor):
            if not torch.is_grad_enabled():
                self.why = (f"the forward writes in place with grad off ({_user_line()}), a write whose "
                            "gradient functionalize drops")
            elif _in_set(self._detached, args[0]):
                self.why = (f"the forward writes in place into a detached alias ({_user_line()}, through "
                            "`detach`), a write whose gradient functionalize drops")


def _torch_asks() -> bool:
    """Whether torch's own code (not the user's) made the call the watch sees."""
    torch_dir = torch.__file__.rsplit("/", 1)[0]
    frame: Optional[types.FrameType] = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if "/codemod/runtime/" not in name and not name.endswith(("/torch/overrides.py", "/torch/_tensor.py")):
            return name.startswith(torch_dir)
        frame = frame.f_back
    return False


def _in_set(found: Dict[int, "weakref.ref[torch.Tensor]"], t) -> bool:
    return isinstance(t, torch.Tensor) and id(t) in found and found[id(t)]() is t


@dataclasses.dataclass
class Functionalized:
    grads: Optional[Dict[str, torch.Tensor]] = None
    why_not: str = ""  # why there are none: functionalize could not run it, or does not apply


def functionalize_grads(model, args, kwargs, names: List[str], loss, reseed) -> Functionalized:
    """Gradients of a module's forward values via ``torch.func.functionalize``: a second
    oracle, independent of saved-tensor hooks. None where functionalize cannot run it, or
    where the forward does what functionalize does not follow (``FunctionalizeWatch``).
    ``reseed()`` seeds the draws as for the call it is compared with (dropout's mask)."""
    from torch.func import functional_call, functionalize, grad

    params = {n: p.detach() for n, p in model.named_parameters() if p.requires_grad}
    tensor_args = [a.detach().clone() if isinstance(a, torch.Tensor) else a for a in args]

    def f(params, *inputs):  # grad() hides requires_grad from the outputs: weigh them all
        out = functional_call(model, params, tuple(inputs), dict(kwargs))
        return loss(out, everything=True)

    argnums = (0,) + tuple(i + 1 for i, a in enumerate(tensor_args)
                           if isinstance(a, torch.Tensor) and a.requires_grad)
    reseed()
    watch = FunctionalizeWatch()
    try:
        with watch:
            found = grad(functionalize(f), argnums=argnums)(params, *tensor_args)
    except Exception:
        return Functionalized(why_not=watch.why or "functionalize could not run this model")
    if watch.why:
        return Functionalized(why_not=watch.why)
    out = {f"param:{n}": g for n, g in found[0].items()}
    for i, g in zip(argnums[1:], found[1:]):
        out[f"input:{i - 1}"] = g
    return Functionalized({n: out[n] for n in names if n in out})
