"""The locator: run code and name both lines of every in-place conflict.

PyTorch's anomaly mode shows where a tensor was saved for backward, never where it was
modified. The :class:`Locator` sees both while the forward runs:

- a saved-tensor pack hook records every tensor autograd saves: the user line that saved it,
  the op, whether it was that op's input or output, the module path, and its version. The unpack
  hook re-checks the version (autograd skips its own check while such hooks are installed), so
  backward still fails exactly where it would have failed, and the conflict is marked confirmed;
- a ``TorchFunctionMode`` compares each tensor argument's version before and after every call:
  a bump on a tensor whose saved copy is still alive (its graph not yet freed) and whose version
  moved past the saved one is a conflict, found at the offending line, before backward runs;
- global module hooks give the module path of ops inside library modules, and the line that
  built an ``inplace=True`` module, which is where its fix goes.

Use it around your own code::

    from codemod.runtime.locate import Locator
    with Locator() as loc:
        loss = model(x).sum()
        loss.backward()
    print(loc.report())

Limits: hooks and modes are thread-local (DataParallel replicas are invisible); code that
installs its own saved-tensor hooks (non-reentrant checkpointing, ``save_on_cpu``) hides what it
saves; inference tensors have no version counter; under ``torch.compile`` the conflict is raised
at compile time, so run the locator with compilation off.
"""

from __future__ import annotations

import dataclasses
import linecache
import os
import re
import sys
import sysconfig
import types
import weakref
from typing import TYPE_CHECKING, Any, Callable, Dict, List, NamedTuple, Optional, Tuple

import torch
from torch.overrides import TorchFunctionMode

from codemod.runtime.view_copies import refused_view

if TYPE_CHECKING:
    from codemod.runtime.harness import Target

_TORCH_DIR = os.path.dirname(torch.__file__)
_OWN_DIR = os.path.dirname(os.path.abspath(__file__))
_STDLIB_DIRS = tuple({sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]})


@dataclasses.dataclass
class Site:
    """A place in user code: file, line, the source text there, and the expression's columns."""

    file: str
    line: int
    text: str
    end_line: Optional[int] = None
    column: Optional[int] = None  # UTF-8 byte offsets, as CPython gives them
    end_column: Optional[int] = None
    function: str = ""
    cell: Optional[str] = None  # "In [3]" for code typed into Jupyter/IPython

    def __str__(self) -> str:
        where = f"cell {self.cell}, line {self.line}" if self.cell else f"{self.file}:{self.line}"
        return f"{where}: {self.text}"


@dataclasses.dataclass
class Conflict:
    """One tensor saved for backward and then modified in place (or a leaf/view error)."""

    kind: str  # "saved-then-modified", "leaf", "view", "optimizer-step", "runtime-inplace-flag"
    mutation: Optional[Site]
    mutation_op: str
    save: Optional[Site] = None
    save_op: str = ""
    saved_as: str = ""  # "input 0", "output"
    save_module: str = ""  # e.g. "net.1 = Sigmoid()"
    mutation_module: str = ""  # e.g. "net.2 = ReLU(inplace=True)"
    construct: Optional[Site] = None  # where the in-place module was built, in user code
    shape: tuple = ()
    version_saved: int = 0
    version_now: int = 0
    confirmed: bool = False
    message: str = ""
    same_dtypes: bool = True  # the other tensors of the in-place op had the target's dtype
    callers: Tuple[Site, ...] = ()  # leaf errors, optimizer steps: the user frames around the mutation, innermost first
    created: Optional[Site] = None  # view errors: where the refused view was made (the chunk call)
    created_op: str = ""
    created_how: str = ""  # view errors: "multi-output", "no-grad" or "custom-function" (PyTorch's creation meta)
    operands_require_grad: bool = False  # leaf errors: a value the update writes requires grad (it carries a gradient)
    written_parameter: bool = False  # leaf errors: the leaf written (or the base of the view written) is an ``nn.Parameter``
    update: str = ""  # optimizer-step conflicts: "step" (an optimizer's) or "load" (``load_state_dict``)
    backward: Tuple[Site, ...] = ()  # confirmed ones: the user frames of the backward that failed on it, innermost first

    @property
    def fix_site(self) -> Optional[Site]:
        """Where the fix goes: the module's constructor for module-internal in-place ops."""
        return self.construct or self.mutation

    def describe(self) -> str:
        lines = []
        head = {"saved-then-modified": "in-place modification of a tensor saved for backward",
                "leaf": "in-place operation on a leaf tensor that requires grad",
                "view": "in-place operation on a view that autograd cannot track",
                "optimizer-step": "an optimizer step modified a parameter that a live graph saved",
                "runtime-inplace-flag": "a module's inplace flag was switched on at run time"}[self.kind]
        if self.update == "load":
            head = "loading a state (`load_state_dict`) modified a parameter that a live graph saved"
        lines.append(f"{head}{' (confirmed by backward)' if self.confirmed else ''}")
        if self.save is not None:
            module = f" in {self.save_module}" if self.save_module else ""
            lines.append(f"  saved    {self.save}  [{self.save_op}{module}, {self.saved_as}]")
        if self.mutation is not None:
            module = f" in {self.mutation_module}" if self.mutation_module else ""
            lines.append(f"  modified {self.mutation}  [{self.mutation_op}{module}]")
        if self.created is not None:
            lines.append(f"  view of  {self.created}  [{self.created_op}]")
        if self.construct is not None:
            lines.append(f"  built    {self.construct}  (fix it here)")
        if self.shape:
            lines.append(f"  tensor   shape {tuple(self.shape)}, version {self.version_saved} when saved, "
                         f"{self.version_now} after the change")
        if self.message:
            lines.append(f"  {self.message}")
        return "\n".join(lines)


class LocatedInplaceError(RuntimeError):
    """Raised at the offending in-place op when ``raise_on_conflict`` is set."""


def _is_user_file(filename: str) -> bool:
    if filename.startswith("<") and not filename.startswith("<ipython"):
        return False
    return not (filename.startswith(_TORCH_DIR) or filename.startswith(_OWN_DIR)
                or filename.startswith(_STDLIB_DIRS))


_user_code_cache: Dict[Any, bool] = {}


def _user_frame(skip: int = 1):
    frame = sys._getframe(skip)
    while frame is not None:
        code = frame.f_code
        user = _user_code_cache.get(code)
        if user is None:
            user = _user_code_cache[code] = _is_user_file(code.co_filename)
        if user:
            return frame
        frame = frame.f_back
    return None


def _callers(frame) -> Tuple[Site, ...]:
    """The user frames that called ``frame``'s function, innermost first: where a fix around
    the call of a helper goes (``init_weights(w)`` called outside ``no_grad``)."""
    found = []
    frame = frame.f_back if frame is not None else None
    while frame is not None and len(found) < 16:
        if _is_user_file(frame.f_code.co_filename):
            site = _site(frame)
            if site is not None:
                found.append(site)
        frame = frame.f_back
    return tuple(found)


class _Where(NamedTuple):
    """Where a frame was, kept cheaply: a :class:`Site` is built from it only when reported."""

    code: types.CodeType
    lasti: int
    lineno: int


_positions_cache: Dict[types.CodeType, list] = {}


def _where(frame) -> Optional[_Where]:
    return None if frame is None else _Where(frame.f_code, frame.f_lasti, frame.f_lineno)


def _site_at(where: Optional[_Where]) -> Optional[Site]:
    if where is None:
        return None
    code, line = where.code, where.lineno
    end_line = column = end_column = None
    try:
        positions = _positions_cache.get(code)
        if positions is None:
            positions = _positions_cache[code] = list(code.co_positions())
        line, end_line, column, end_column = positions[where.lasti // 2]
        line = line or where.lineno
    except (IndexError, AttributeError, ValueError):
        pass
    text = linecache.getline(code.co_filename, line).strip()
    return Site(code.co_filename, line, text, end_line, column, end_column, code.co_name,
                _cell_label(code.co_filename))


def _site(frame) -> Optional[Site]:
    return _site_at(_where(frame))


_IPYTHON_FILE = re.compile(r"ipykernel_\d+[/\\]\d+\.py$|^<ipython-input-(\d+)-")


def _cell_label(filename: str) -> Optional[str]:
    """``In [n]`` for a Jupyter/IPython cell (ipykernel names cells by a hash of their code)."""
    match = _IPYTHON_FILE.search(filename)
    if match is None:
        return None
    if match.group(1):
        return f"In [{match.group(1)}]"
    try:
        from IPython import get_ipython

        history = get_ipython().user_ns.get("In", [])
    except Exception:
        history = []
    source = "".join(linecache.getlines(filename))
    for number, text in enumerate(history):
        if text and text.strip() == source.strip():
            return f"In [{number}]"
    return "In [?]"


_MODULE_PY = os.path.join(_TORCH_DIR, "nn", "modules", "module.py")
_LOADS = frozenset({"load_state_dict", "_load_from_state_dict"})


_UPDATE_MESSAGES = {
    "load": ("no rewrite of an in-place op fixes this: `load_state_dict` copied new weights into parameters a "
             "live graph saved; run backward before the load (`inplacefix repair` does it, in the meaning "
             "\"as computed\"), or run the forward again after it"),
    "step": ("no rewrite of an in-place op fixes this: run backward before optimizer.step() (`inplacefix repair` "
             "does it, in the meaning \"as computed\"), or run the forward again after it (a retained graph "
             "cannot see new parameters; `inplacefix repair --meaning recompute` does it)"),
}


def _parameter_update_frame() -> str:
    """Which update of parameters the current write runs inside: ``"step"`` (an optimizer's:
    code under ``torch/optim``, or a method of an ``Optimizer`` subclass the program defines),
    ``"load"`` (``Module.load_state_dict`` copying a state in), or ``""``. Both change the weights
    a live graph saved between its forward and its backward, so both are repaired by moving the
    update, not by rewriting an in-place op. The program's own code that a torch optimizer calls
    back (LBFGS's closure: a forward, a backward) is the program's, not the step's: its writes
    are ordinary ones."""
    frame = sys._getframe(2)
    optim_dir = os.path.join(_TORCH_DIR, "optim")
    called_back = False  # the program's own code, below a torch optimizer frame not yet seen
    while frame is not None:
        code = frame.f_code
        if code.co_filename.startswith(optim_dir):
            return "" if called_back else "step"
        if code.co_filename == _MODULE_PY and code.co_name in _LOADS:
            return "load"
        if _is_user_file(code.co_filename):
            if code.co_name == "step" and isinstance(frame.f_locals.get("self"), torch.optim.Optimizer):
                return "step"  # an optimizer the program defines, stepping (its other methods, as SAM's
                # `first_step`, stay the program's writes: the step-order rewrites do not place them yet)
            called_back = True
        frame = frame.f_back
    return ""


def _carries(target: Optional[torch.Tensor], operands) -> str:
    """For a leaf error: whether a value the update writes carries a gradient from another leaf
    than the one written, and into what: "" (none does: ``w[0] *= 1.0001`` reads only ``w``),
    "parameter" (into an ``nn.Parameter``), "tensor" (into any other leaf)."""
    written = {id(t) for t in (target, getattr(target, "_base", None)) if t is not None}
    try:
        if not any(_requires_grad(o) and _other_leaf(o, written) for o in operands):
            return ""
    except RuntimeError:  # `.grad_fn` of a view whose base changed raises: not known, so it may
        pass
    return "parameter" if _is_parameter(target) else "tensor"


def _is_parameter(target: Optional[torch.Tensor]) -> bool:
    """Whether ``target``, or the tensor it is a view of (``w[:, j]``), is an ``nn.Parameter``."""
    return any(isinstance(t, torch.nn.Parameter) for t in (target, getattr(target, "_base", None)))


def _other_leaf(value: torch.Tensor, written: set, limit: int = 10_000) -> bool:
    """Whether ``value``'s graph reaches a leaf whose id is not in ``written`` (True where the
    walk is cut short: unknown is not "only the written leaf")."""
    if value.grad_fn is None:
        return id(value) not in written
    todo, seen = [value.grad_fn], set()
    while todo:
        node = todo.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if len(seen) > limit:
            return True
        leaf = getattr(node, "variable", None)
        if leaf is not None and id(leaf) not in written:
            return True
        todo.extend(following for following, _ in node.next_functions)
    return False


def _stale_error(record: "_Saved", now: int) -> RuntimeError:
    """What autograd would raise at this saved tensor, raised by the locator first."""
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: saved by {record.op} at version {record.version}, now at "
        f"version {now} (found by inplacefix's locator)"
    )


@dataclasses.dataclass
class _Saved:
    """What the pack hook knows about one saved tensor. It runs at every save, so it keeps only
    cheap handles (frame position, module); lines and labels are worked out when reported."""

    tensor: torch.Tensor  # detached: same storage and version counter, no reference cycle
    version: int
    where: Optional[_Where]
    op: str
    saved_as: str
    module_obj: Optional[torch.nn.Module]
    conflicts: list = dataclasses.field(default_factory=list)
    pending: list = dataclasses.field(default_factory=list)  # writes seen in a backward, kept once a later one sees them
    _site: Optional[Site] = None

    @property
    def site(self) -> Optional[Site]:
        if self._site is None:
            self._site = _site_at(self.where)
        return self._site


class _Packed:
    """What autograd keeps in the graph; weakly referenced by the registry, so a freed graph
    drops its records by itself."""

    __slots__ = ("record", "__weakref__")

    def __init__(self, record: _Saved) -> None:
        self.record = record


def _storage_key(t: torch.Tensor):
    """What a save and a later write of the same memory share: the storage; for a tensor that has
    none (sparse layouts: ``L += L.t()`` on a ``sparse_coo_tensor`` output), the tensor itself."""
    try:
        return t.untyped_storage().data_ptr(), t.device
    except Exception:
        pass
    try:
        return "tensor", t._cdata, t.device
    except Exception:
        return None


def _version(t: torch.Tensor) -> Optional[int]:
    try:
        return t._version
    except Exception:  # inference tensors have no version counter
        return None


class Locator(TorchFunctionMode):
    """Records saves and in-place changes; see the module docstring."""

    def __init__(self, raise_on_conflict: bool = False, module_names: Optional[Dict[int, str]] = None) -> None:
        super().__init__()
        self.raise_on_conflict = raise_on_conflict
        self.conflicts: List[Conflict] = []
        self._registry: Dict[Any, list] = {}
        self._ops: List[tuple] = []  # stack of (op name, args) being called
        self._modules: List[torch.nn.Module] = []
        self._module_names: Dict[int, str] = dict(module_names or {})
        self._built: Dict[int, Site] = {}  # id(module) -> where it was constructed
        self._seen: Dict[tuple, Conflict] = {}
        self._contexts: list = []
        self.mixed_dtype_lines: set = set()  # (file, line) where an in-place op mixed dtypes
        self._views: Dict[int, tuple] = {}  # id(refused view) -> (weakref, Site made, op)
        self._view_storages: set = set()  # storages refused views were taken from
        self._base_writes: Dict[Any, tuple] = {}  # such a storage -> (Site, op) of its last in-place write
        self._backward = 0  # depth of custom Functions' backward run under this mode
        # Called before a saved tensor's change is reported as unseen: a caller that runs some
        # code outside the mode (the script runner's optimizer steps) reports its writes then.
        self.flush_unseen: Optional[Callable[[], None]] = None

    # ---------------------------------------------------------------- set-up
    def name_modules(self, root: torch.nn.Module) -> None:
        for name, module in root.named_modules():
            self._module_names[id(module)] = name or type(root).__name__

    def __enter__(self):
        hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        hooks.__enter__()
        self._contexts.append(hooks)
        pre = torch.nn.modules.module.register_module_forward_pre_hook(self._pre)
        post = torch.nn.modules.module.register_module_forward_hook(self._post)
        self._contexts.append(pre)
        self._contexts.append(post)
        self._patch_init()
        return super().__enter__()

    def __exit__(self, exc_type, exc, tb):
        result = super().__exit__(exc_type, exc, tb)
        self._unpatch_init()
        post, pre, hooks = self._contexts.pop(), self._contexts.pop(), self._contexts.pop()
        post.remove()
        pre.remove()
        hooks.__exit__(None, None, None)
        if exc is not None and isinstance(exc, RuntimeError) and not isinstance(exc, LocatedInplaceError):
            self._classify_error(exc)
        return result

    def _patch_init(self) -> None:
        """Remember where each module is built (the fix for an in-place module goes there);
        follow custom Functions' backward (``_follow_backward``)."""
        self._original_init, self._original_apply = _patch_module_init(self), _follow_backward(self)

    def _unpatch_init(self) -> None:
        from torch.autograd.function import BackwardCFunction

        torch.nn.Module.__init__ = self._original_init
        BackwardCFunction.apply = self._original_apply

    def _pre(self, module, args):
        self._modules.append(module)
        return None

    def _post(self, module, args, output):
        if self._modules and self._modules[-1] is module:
            self._modules.pop()
        return None

    def _module_label(self, module) -> str:
        if module is None or not type(module).__module__.startswith("torch."):
            return ""  # user modules are visible from the line itself
        name = self._module_names.get(id(module), type(module).__name__)
        return f"{name} = {module!r}" if len(repr(module)) < 80 else f"{name} = {type(module).__name__}(...)"

    # ---------------------------------------------------------------- saves
    def _pack(self, t: torch.Tensor):
        version = _version(t)
        if version is None:
            return t
        op, args = self._ops[-1] if self._ops else ("?", ())
        saved_as = "output"
        for i, a in enumerate(args):
            if a is t:
                # An in-place op's result is its first input: call that its output.
                saved_as = "output" if (i == 0 and op.endswith("_")) else f"input {i}"
                break
        else:
            held = _input_holding(t, args)
            if held is not None and not (held == "input 0" and op.endswith("_")):
                saved_as = held
        module = self._modules[-1] if self._modules else None
        record = _Saved(t.detach(), version, _where(_user_frame(2)), op, saved_as, module)
        packed = _Packed(record)
        key = _storage_key(t)
        if key is not None:
            self._registry.setdefault(key, []).append(weakref.ref(packed))
        return packed

    def _unpack(self, packed):
        if not isinstance(packed, _Packed):
            return packed
        record = packed.record
        now = _version(record.tensor)
        if now is not None and now != record.version:
            for conflict in record.pending:  # a write in an earlier backward: this backward sees it
                record.conflicts.append(self._add(conflict))
            record.pending.clear()
            if not record.conflicts and self.flush_unseen is not None:
                self.flush_unseen()  # a closure's backward inside a step (LBFGS): the step's writes so far
            failing = _callers(sys._getframe(0))  # the backward's call and its callers (``update_params(opt, loss)``)
            for conflict in record.conflicts:
                conflict.confirmed = True
                if not conflict.backward:
                    conflict.backward = failing
            if not record.conflicts:  # a change the function mode could not see (C++ code)
                self._add(Conflict("saved-then-modified", None, "(not seen: native code)",
                                   record.site, record.op, record.saved_as, self._module_label(record.module_obj),
                                   shape=tuple(record.tensor.shape), version_saved=record.version,
                                   version_now=now, confirmed=True))
            raise _stale_error(record, now)
        return record.tensor

    # ---------------------------------------------------------------- calls
    def __torch_function__(self, func, types, args=(), kwargs=None):
        # Runs for every torch call of the program: kept lean (no generator, no per-call
        # allocation beyond the list of (tensor, version) pairs).
        kwargs = kwargs or {}
        before: list = []
        _versions(args, before)
        if kwargs:
            _versions(kwargs.values(), before)
        name = getattr(func, "__name__", None) or str(func)
        self._ops.append((name, args))
        try:
            result = func(*args, **kwargs)
        except RuntimeError as exc:
            tensors = [t for t, _ in before]
            target = tensors[0] if tensors else None
            view = next((m for m in (self._view_made(t) for t in tensors) if m is not None), None)
            base_write = next((self._base_writes[k] for k in (_storage_key(t) for t in tensors)
                               if k in self._base_writes), None)
            self._classify_error(exc, name, same_dtypes=all(o.dtype == target.dtype for o in tensors[1:])
                                 if target is not None else False, view=view, base_write=base_write,
                                 carries=_carries(target, tensors[1:]), parameter=_is_parameter(target))
            raise
        finally:
            self._ops.pop()
        if isinstance(result, (tuple, list)) or isinstance(result, torch.Tensor) and result._is_view():
            self._note_views(result, before, name)  # most results are no views: no call for them
        for t, version in before:
            if version is not None and t._version != version:
                now = _version(t)
                if now is None:
                    continue
                operands = [o for o, _ in before if o is not t]
                if any(o.dtype != t.dtype for o in operands):
                    self._mixed_dtype_line()
                # A write into the tensor viewed, or one PyTorch allows into the view itself
                # (grad off): PyTorch raises later, where a view is used with grad on.
                if self._view_storages and (self._view_made(t) is None or not torch.is_grad_enabled()):
                    key = _storage_key(t)
                    if key in self._view_storages:
                        self._base_writes[key] = (_site(_user_frame(2)), name)
                self._mutated(t, name, now, operands)
        return result

    def _note_views(self, result, before: list, op: str) -> None:
        """Remember where each view PyTorch refuses to modify in place was made (a view of one
        keeps the place of the first: the ``chunk`` call, not the ``transpose`` after it)."""
        if isinstance(result, (tuple, list)):
            outputs = [t for t in result if refused_view(t)]
        elif refused_view(result):
            outputs = [result]
        else:
            return
        if not outputs:
            return
        made = next((m for m in (self._view_made(t) for t, _ in before) if m is not None), None)
        if made is None:
            made = (_site(_user_frame(3)), op, _creation(outputs[0]))
        for t in outputs:
            self._views[id(t)] = (weakref.ref(t), *made)
            self._view_storages.add(_storage_key(t))
        if len(self._views) > 4096:  # forget the dead ones
            self._views = {k: v for k, v in self._views.items() if v[0]() is not None}

    def _view_made(self, t) -> Optional[tuple]:
        """(Site, op, how) where and how the refused view ``t`` was made, if the locator saw it."""
        found = self._views.get(id(t)) if t is not None else None
        if found is None or found[0]() is not t:
            return None
        return found[1], found[2], found[3]

    def _mixed_dtype_line(self) -> None:
        """An in-place op here mixed dtypes: an out-of-place rewrite of any op on this line
        (a chain ``a.mul_(b).add_(c)`` is fixed as one) could promote."""
        site = _site(_user_frame(3))
        if site is not None:
            self.mixed_dtype_lines.add((site.file, site.line))
            for conflict in self.conflicts:
                if conflict.mutation is not None and (conflict.mutation.file, conflict.mutation.line) == (site.file, site.line):
                    conflict.same_dtypes = False

    def _mutated(self, t: torch.Tensor, op: str, now: int, operands=(), frame=None) -> None:
        key = _storage_key(t)
        refs = self._registry.get(key, [])
        alive = []
        for ref in refs:
            packed = ref()
            if packed is None:
                continue
            alive.append(ref)
            record = packed.record
            current = _version(record.tensor)
            if current is None or current == record.version:
                continue  # another counter (`.data`), or not this tensor's family
            if any(c.mutation_op == op and c.version_now == current for c in record.conflicts + record.pending):
                continue
            user = frame if frame is not None else _user_frame(3)
            site = _site(user)
            module = self._modules[-1] if self._modules else None
            update = _parameter_update_frame() or ("step" if op == "optimizer.step" else "")
            kind = "optimizer-step" if update else "saved-then-modified"
            construct = None
            message = ""
            if module is not None and getattr(module, "inplace", None) is True:
                construct = self._built.get(id(module))
                if construct is None:
                    message = "the module was built outside the code the locator saw"
                elif "inplace" not in construct.text and "True" not in construct.text and "**" not in construct.text:
                    # (``act_layer(**act_kwargs)``: the flag came in the mapping, at construction)
                    kind = "runtime-inplace-flag"
                    message = ("the module was built without inplace=True and switched on later "
                               "(e.g. `m.inplace = True`): remove that assignment")
            if kind == "optimizer-step":
                message = _UPDATE_MESSAGES[update]
            conflict = Conflict(kind, site, op, record.site, record.op, record.saved_as, self._module_label(record.module_obj),
                                self._module_label(module), construct, tuple(record.tensor.shape),
                                record.version, current, message=message,
                                same_dtypes=all(o.dtype == t.dtype for o in operands),
                                callers=_callers(user) if kind == "optimizer-step" else (),
                                update=update)
            if self._backward:
                record.pending.append(conflict)
                continue
            record.conflicts.append(self._add(conflict))
            if self.raise_on_conflict:
                raise LocatedInplaceError(conflict.describe())
        if key is not None:
            if alive:
                self._registry[key] = alive
            else:
                self._registry.pop(key, None)

    def _classify_error(self, exc: RuntimeError, op: str = "", same_dtypes: bool = False,
                        view: Optional[tuple] = None, base_write: Optional[tuple] = None,
                        carries: str = "", parameter: bool = False) -> None:
        text = str(exc)
        kind = None
        if "leaf Variable that requires grad" in text:
            kind = "leaf"
        elif ("is a view" in text or "created in no_grad mode" in text) and ("inplace" in text or "in-place" in text):
            kind = "view"
        if kind is None or getattr(exc, "_inplacefix_seen", False):
            return
        try:
            exc._inplacefix_seen = True
        except AttributeError:
            pass
        frame = _user_frame(3)
        site = _site(frame)
        created, created_op, created_how = view if kind == "view" and view is not None else (None, "", "")
        message = text.splitlines()[0][:200]
        if kind == "view" and base_write is not None and "has been modified inplace" in text:
            # Raised where the view is read; the write PyTorch means is the one into its base.
            message = f"read at {site}: {message}" if site is not None else message
            site, op = base_write
        self._add(Conflict(kind, site, op or "?", message=message, confirmed=True, same_dtypes=same_dtypes,
                           callers=_callers(frame), created=created, created_op=created_op,
                           created_how=created_how, operands_require_grad=bool(carries),
                           written_parameter=parameter or carries == "parameter"))

    def _add(self, conflict: Conflict) -> Conflict:
        """Keep one conflict per (kind, save line, mutation line); return the one kept."""
        if conflict.mutation is not None and (conflict.mutation.file, conflict.mutation.line) in self.mixed_dtype_lines:
            conflict.same_dtypes = False
        key = (conflict.kind, conflict.save and (conflict.save.file, conflict.save.line),
               conflict.mutation and (conflict.mutation.file, conflict.mutation.line))
        if key not in self._seen:
            self._seen[key] = conflict
            self.conflicts.append(conflict)
        return self._seen[key]

    def report(self) -> str:
        if not self.conflicts:
            return "No in-place conflicts found."
        return "\n\n".join(c.describe() for c in self.conflicts)


def _patch_module_init(locator: "Locator"):
    """``nn.Module.__init__`` that remembers where each module is built; returns the original."""
    original = torch.nn.Module.__init__

    def __init__(module, *args, **kwargs):
        original(module, *args, **kwargs)
        frame = _user_frame(2)
        if frame is not None and id(module) not in locator._built:
            locator._built[id(module)] = _site(frame)

    torch.nn.Module.__init__ = __init__
    return original


def _follow_backward(locator: "Locator"):
    """Run a custom ``autograd.Function``'s backward under the locator's mode (the engine runs
    it with the mode off: a backward call's handler pops it); returns the original ``apply``.
    A write there into a tensor a graph saved is kept only once a later backward finds that
    tensor changed (``Locator._unpack``): after the backward that frees the graph, it harms nothing."""
    from torch.autograd.function import BackwardCFunction

    original = BackwardCFunction.apply

    def apply(ctx, *args):
        stack = getattr(torch.overrides, "_get_current_function_mode_stack", lambda: [locator])()
        if any(m is locator for m in stack):
            return original(ctx, *args)
        TorchFunctionMode.__enter__(locator)
        locator._backward += 1
        try:
            return original(ctx, *args)
        finally:
            locator._backward -= 1
            TorchFunctionMode.__exit__(locator, None, None, None)

    BackwardCFunction.apply = apply
    return original


_HOW = {"MULTI_OUTPUT_NODE": "multi-output", "NO_GRAD_MODE": "no-grad", "IN_CUSTOM_FUNCTION": "custom-function"}


def _creation(t: torch.Tensor) -> str:
    """How PyTorch says a refused view was made (its creation meta), in words."""
    try:
        return _HOW.get(torch._C._autograd._get_creation_meta(t).name, "")
    except (RuntimeError, AttributeError):
        return ""


def _input_holding(t: torch.Tensor, args) -> Optional[str]:
    """Which input of the op a saved tensor that is none of its arguments comes from: an input
    passed inside a list (``torch.einsum(eq, [a, b])``: ``"input 1.1"``), or one the op saved
    a view of (``torch.matmul`` folds a batch into ``mm``'s input). A tensor that shares
    memory with an input is that input's (an out-of-place op's output is new memory); where
    several inputs share it, the one that starts where the saved tensor starts."""
    key = _storage_key(t)
    if key is None:
        return None
    found = []
    for i, a in enumerate(args):
        items = [(f"input {i}", a)] if isinstance(a, torch.Tensor) else \
            [(f"input {i}.{j}", b) for j, b in enumerate(a) if isinstance(b, torch.Tensor)] \
            if isinstance(a, (list, tuple)) else []
        found += [(label, b) for label, b in items if _storage_key(b) == key]
    if not found:
        return None
    try:
        start = t.data_ptr()
        return next((label for label, b in found if b.data_ptr() == start), found[0][0])
    except RuntimeError:
        return found[0][0]


def _requires_grad(t: torch.Tensor) -> bool:
    try:
        return bool(t.requires_grad)
    except Exception:
        return False


def _versions(items, out: list) -> None:
    """Append ``(tensor, version)`` for every tensor in ``items`` (nested lists and tuples too)."""
    for item in items:
        if isinstance(item, torch.Tensor):
            try:
                out.append((item, item._version))
            except Exception:  # inference tensors have no version counter
                out.append((item, None))
        elif isinstance(item, (list, tuple)):
            _versions(item, out)


@dataclasses.dataclass
class LocateResult:
    target: str
    conflicts: List[Conflict]
    error: str = ""  # how the run ended, if it failed
    error_kind: Optional[str] = None  # "saved", "leaf", "view" when it ended with an in-place error
    traceback: str = ""  # with ``raise_on_conflict``: the traceback that ends on the bad line
    output: str = ""  # what the target printed (stdout and stderr), kept out of the report

    @property
    def unseen(self) -> Optional[str]:
        """Why the run died with an in-place error that the locator did not see (or None)."""
        if self.conflicts or self.error_kind is None:
            return None
        return ("the run dies with the in-place error, but the locator saw neither the save nor the "
                "change: the tensor was saved or modified before the run started (at import time), "
                "in another thread, or inside native code")

    @property
    def found_something(self) -> bool:
        """Exit code 1 for ``locate``: a conflict, or an in-place error it could not place."""
        return bool(self.conflicts) or self.error_kind is not None

    def to_json(self) -> dict:
        def site(s: Optional[Site]):
            return None if s is None else dataclasses.asdict(s)

        return {
            "target": self.target,
            "error": self.error or None,
            "error_kind": self.error_kind,
            "not_seen": self.unseen,
            "conflicts": [
                {**{k: v for k, v in dataclasses.asdict(c).items()
                    if k not in ("save", "mutation", "construct", "created")},
                 "save": site(c.save), "mutation": site(c.mutation), "construct": site(c.construct),
                 "created": site(c.created)}
                for c in self.conflicts
            ],
        }

    def render(self) -> str:
        if not self.conflicts:
            if self.unseen:
                return f"{self.target}: in-place error not located: {self.unseen}.\n({self.error})"
            tail = f"\n(the run failed otherwise: {self.error})" if self.error else ""
            return f"{self.target}: no in-place conflicts found.{tail}"
        body = "\n\n".join(f"{i}. {c.describe()}" for i, c in enumerate(self.conflicts, 1))
        return f"{self.target}: {len(self.conflicts)} conflict(s)\n\n{body}"


@dataclasses.dataclass
class _LocateRequest:
    target: "Target"
    source: str
    raise_on_conflict: bool
    modules: Optional[Dict[str, str]] = None  # other files' texts to import instead (path -> text)


def locate_target(target: str, source: Optional[str] = None, raise_on_conflict: bool = False,
                  init_kwargs=None, input_shapes=None, inputs_require_grad: bool = False,
                  timeout: Optional[float] = None, modules: Optional[Dict[str, str]] = None) -> LocateResult:
    """Run ``file.py::Name`` (as ``verify`` runs its first call: forward, then the harness's
    backward) under the locator, in a fresh process (``isolate.run_isolated``)."""
    from codemod.runtime.harness import parse_target, read_source
    from codemod.runtime.isolate import DEFAULT_TIMEOUT, run_isolated

    spec = parse_target(target, init_kwargs, input_shapes, inputs_require_grad)
    if source is None:
        source = read_source(spec.path)
    limit = DEFAULT_TIMEOUT if timeout is None else timeout
    outcome = run_isolated(_locate_in_child, _LocateRequest(spec, source, raise_on_conflict, modules),
                           timeout=limit, path_first=str(spec.path.resolve().parent))
    output = (outcome.stdout + outcome.stderr).strip()
    if not outcome.ok:
        why = str(outcome.error) if outcome.error is not None else outcome.detail
        return LocateResult(target, [], f"the run did not finish: {why}", output=output)
    value = outcome.value
    if isinstance(value, str):  # a HarnessError's message
        from codemod.runtime.harness import HarnessError

        raise HarnessError(value)
    value.target, value.output = target, output
    return value


def _locate_in_child(request: _LocateRequest):
    """The locator's run, inside the isolated child."""
    import traceback

    from codemod.runtime.harness import (HarnessError, Program, build_model, init_kwargs_for,
                                         inplace_error_kind, make_inputs, seed_everything, weighted_loss)

    spec = request.target
    if request.modules:
        from codemod.runtime.rewritten_imports import use_sources

        use_sources(request.modules)
    locator = Locator(raise_on_conflict=request.raise_on_conflict)
    error, kind, trace = "", None, ""
    try:
        seed_everything(0)
        with locator:
            program = Program(request.source, spec.path, spec.name)
            if program.is_module:
                args, kwargs = make_inputs(program, spec)
                model = build_model(program, init_kwargs_for(program, spec), None, "cpu", None)
                locator.name_modules(model)
                model.train()
                seed_everything(1)
                out = model(*args, **kwargs)
            else:
                seed_everything(0)
                out = program.obj()
            loss = weighted_loss(out)
            if loss is not None and loss.requires_grad:
                loss.backward()
    except HarnessError as exc:
        return str(exc)
    except LocatedInplaceError as exc:
        trace = "".join(traceback.format_exception(exc))
        error = f"LocatedInplaceError: {str(exc).splitlines()[0]}"
    except BaseException as exc:  # noqa: BLE001 - the user's program failed: a result
        text = str(exc)
        first = text.splitlines()[0].split(" Hint:", 1)[0][:300] if text else ""
        error = f"{type(exc).__name__}: {first}"
        kind = inplace_error_kind(type(exc).__name__, text)
    return LocateResult(spec.spec, locator.conflicts, error, kind, trace)
