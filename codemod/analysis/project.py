"""The project-wide index: definitions and call sites across the files of a run.

Each file contributes :class:`ModuleFacts` (plain data, so it can be cached and sent to worker
processes): its functions, and its calls of functions defined in the run's modules, resolved
through imports (relative ones and re-exports included), each with what the call site shows —
grad off around it, its result ignored, which arguments the caller reads afterwards. The
:class:`ProjectIndex` joins them: a function is grad-off when every call in the project runs
with grad off (transitively), and its mutation is a contract when some caller relies on it.

A file's own analysis (``SemanticModel``) asks the index through ``Calls`` about the functions
it defines; without an index (a file checked alone) it uses its own calls only. The index is plain
data at the bottom of the analysis (it imports none of it); what a module contributes is read off
its model by ``analysis.indexing``, at the top.

Callees imported from installed libraries (``from timm.layers import Mlp``) are summarized the
same way when the engine hands the index a :data:`LibrarySummaries` (it finds and reads their
source; this module never touches the file system). Each module's facts name the library
callees it calls, so only those are ever looked up.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import operator
import os
import pathlib
import re
import sys
from typing import Callable, Dict, FrozenSet, Iterable, List, NamedTuple, Optional, Set, Tuple

_LINE = re.compile(r"\bline\s+\d")  # a summary's ``via`` naming a line of its own file


@dataclasses.dataclass(frozen=True)
class CallFact:
    """One call of (or reference to) a project function, as its site shows it."""

    callee: str  # the callee's qualified name (``pkg.mod.f``, ``pkg.mod.Class.m``)
    caller: str  # the qualified name of the function holding the call ("" at module level)
    grad_off: bool  # the code around the call runs with grad off (no_grad, optimizer step...)
    called: bool  # False: a reference (``func = f``), whose calls cannot be followed
    result_ignored: bool
    args_read_after: FrozenSet[str]  # "0", "1"... or keyword names of arguments read afterwards
    args_grad: FrozenSet[str] = frozenset()  # those the caller's analysis shows require grad
    args_tensor: FrozenSet[str] = frozenset()  # those the caller's analysis shows are tensors
    # (argument, why) of those the caller's analysis proves autograd saved before the call and
    # reads in backward (a write into them in the callee breaks backward: ``hazard._from_callers``)
    args_saved: Tuple[Tuple[str, str], ...] = ()
    # a call of an instance (``self.block(x)``, callee ``mod.Block.forward``): positions start after
    # ``self``; an instance may also be called where no file shows, so these calls are not all
    # the calls there are: the index's joined answers (grad off, callers relying) leave them out
    bound: bool = False
    # those the caller's analysis shows are outputs of a multi-view op (``chunk``, ``split``,
    # ``unbind``) of a tensor that requires grad, passed with grad on: views PyTorch refuses to
    # modify in place (a write into the parameter raises)
    args_refused: FrozenSet[str] = frozenset()
    # (argument "0", "1"... or keyword, whether it is a literal, its value) of each argument a call
    # passes as written ("*"/"**" for a spread), read off the syntax alone (``indexing.collect``):
    # what another file's ``Block(c, inplace=False)`` gives a constructor's parameter
    # (``Chains._param_values``); where an argument is no literal, its value may say what it
    # names (``HANDED``: ``"new:pkg.mod.RMSELoss"`` for ``RMSELoss()``), else None
    args_values: Tuple[Tuple[str, bool, object], ...] = ()


# What an argument that is no literal names, where its caller's file can say (``CallFact.args_values``,
# written by ``indexing.handed``; read by ``summaries.Chains`` as ``injected.Foreign``): the value of a
# call of a project name (``new:pkg.mod.Cls``: an instance, or what a factory returns), a project
# function or class by name (``def:pkg.mod.f``), a torch module built (``torch-new:torch.nn.ReLU``),
# a torch function by name (``torch-def:torch.tanh``), a lambda returning one of those (``lambda:`` and it).
HANDED = ("new:", "def:", "torch-new:", "torch-def:", "lambda:")


def handed_name(value: object) -> Optional[str]:
    """The project name an argument's ``HANDED`` value names (its summary is wanted), or None."""
    while isinstance(value, str) and value.startswith("lambda:"):
        value = value[len("lambda:"):]
    if isinstance(value, str) and value.startswith(("new:", "def:")):
        return value.partition(":")[2]
    return None


@dataclasses.dataclass(frozen=True)
class FunctionFact:
    qualname: str
    params: Tuple[str, ...]  # without self/cls
    grad_off: bool  # its own decorators or class say so (no_grad, optimizer step, autograd kernel)
    # what it needs to run what it decorates with grad off, as a decorator / as a factory of one
    # (``grad_mode.GradOffDecorators``: "name,index,default,want" per parameter); None: not shown
    off_as_decorator: Optional[Tuple[str, ...]] = None
    off_as_factory: Optional[Tuple[str, ...]] = None
    # every value it returns requires no grad where what a call hands some of its parameters
    # requires none (its receiver read never, its defaults literals:
    # ``requires_grad.Constants.returns_constant``): ``q, mean = super().remove_mean(p.detach())``
    # of a base class in another file. ``static``, ``class`` or ``bound`` (a receiver first), then
    # ``kind:name:1`` per parameter that must be handed a constant (``0``: need not); None: not so
    constant_returns: Optional[Tuple[str, ...]] = None
    # a module-level function holding a ``with torch.no_grad():`` whose returns are computed from
    # nothing it is handed (``views.InputFlow.fresh_items``: what it computes with grad off, fresh
    # tensors): ``*`` for the whole value, else the indices of the tuple items that are so; ``?``:
    # worked out when asked (``ModuleFacts.resolved``); None: not so, or not held such a ``with``
    fresh_returns: Optional[Tuple[str, ...]] = None


@dataclasses.dataclass(frozen=True)
class ClassFact:
    """A class of a module: its base classes as its file resolves them (a class of the run by
    its qualified name, else ``"?"`` and what is written), and the names its body binds other than by ``def``
    (``remove_mean = staticmethod(f)``: a method the index does not know)."""

    qualname: str
    bases: Tuple[str, ...]
    assigned: Tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class SummaryFact:
    """A module-level function's or ``nn.Module`` class's summary (``analysis.summaries``), as
    plain data: what calling it from another file does with its tensors."""

    name: str  # for messages: "LayerNorm.forward"
    inputs: Tuple[str, ...]  # per positional parameter: "yes" / "no" / "unknown" (saved for backward)
    output: str  # "yes" / "no" / "unknown": its result is a tensor autograd saved
    returns: str  # "input" / "view" / "fresh" / "unknown"
    returned_input: Optional[int]
    mutates: Tuple[int, ...]
    via: Tuple[str, ...]
    of: str  # "class" (calling an instance runs its forward) or "function"
    # a class that owns parameters, or a function whose every return builds a module that surely does
    # (``analysis.builders``), as its file sees it: what its instances (its modules) return requires grad
    parametric: bool = False
    keeps: bool = True  # what it returns may also be kept by its own code (``analysis.kept``): unknown is kept
    # a builder function whose every return hands back a torch module built in it: one entry per
    # module, its class, flag and the tests on the builder's parameters it is built under, as JSON
    # (``summaries.encode_built``); None: not such a builder
    builds: Optional[Tuple[str, ...]] = None
    # per positional parameter: the parameters whose gradient needs it saved (``Summary.saved_for``)
    saved_for: Tuple[Optional[Tuple[int, ...]], ...] = ()
    params: Tuple[str, ...] = ()
    # a module-level function that hands on what it computes from its arguments only through its result
    # (``consumed.stores_nothing``: no store, no argument written, its file's callees likewise)
    stores_nothing: bool = False


# The tail of an ``other_dtype`` answer whose every other dtype is integral (int8 to int32,
# the unsigned ones: ``.int()``, ``dtype=torch.int32``, ``.to(torch.uint8)``; ``dtype.other_dtype``):
# an integral tensor that becomes floating takes the default dtype, float32, so every floating
# tensor of the code is still float32, and ``x op y`` of a floating ``x`` (float32 op any
# integral, bool or float32) has x's dtype, as ``x op= y`` keeps (tests/test_dtype_model.py).
# An integral ``x`` may not: int32 op int64 is int64, where ``x op= y`` keeps int32.
INTEGRAL_ONLY = " (integral dtypes only)"


def integral_only(answer: Optional[str]) -> bool:
    """Whether an ``other_dtype`` answer names integral dtypes only (:data:`INTEGRAL_ONLY`)."""
    return answer is not None and answer.endswith(INTEGRAL_ONLY)


@dataclasses.dataclass
class ModuleFacts:
    module: str
    functions: List[FunctionFact]
    calls: List[CallFact]
    exports: Dict[str, str]  # names imported into the module from the project (re-exports)
    # names imported from outside the project (not torch) that the module calls: local name ->
    # qualified name (``Mlp`` -> ``timm.layers.Mlp``), looked up in installed libraries
    libraries: Dict[str, str] = dataclasses.field(default_factory=dict)
    # the first thing in the module that makes (or may make) a tensor of another dtype than
    # float32, int64 or bool (``analysis.dtype.other_dtype``: a floating one first, else an
    # integral one with ``INTEGRAL_ONLY`` after it); None: nothing
    other_dtype: Optional[str] = None
    # whether ``calls`` say what they pass (``args_read_after``, ``args_grad``); when not, the
    # index asks its ``ArgumentLoader`` the first time some analysis wants them
    argued: bool = True
    # what the module's facts were made from (its content, as the engine keys it): what the
    # calls pass is named by it in ``digest_for``, and the loader checks it
    key: str = ""
    # the first place in the module that hooks a module's calls (``arguments.hook_site``:
    # ``m.register_forward_pre_hook(...)``, ``m.forward = ...``); None: nothing
    hooks: Optional[str] = None
    # its top-level classes (bases resolved), for methods found up a chain across files
    classes: List[ClassFact] = dataclasses.field(default_factory=list)
    # the names its top level binds to string literals only (``NODE_KEY: Final[str] = "node"``),
    # the other names it binds (imports but ``*`` included), and the run's modules it imports
    # with ``*`` (in order): a key ``keys.NODE_KEY`` of another file is a string (``string_keys``)
    strings: Tuple[str, ...] = ()
    names: Tuple[str, ...] = ()
    stars: Tuple[str, ...] = ()
    # the names its top level binds to int literals only (``R: Final[int] = 0``; among ``names`` too): an
    # index ``rows.R`` of another file is an int, a basic index (``hazard._known_basic``)
    ints: Tuple[str, ...] = ()
    # what works out ``other_dtype``, ``hooks`` and the functions' ``constant_returns`` when
    # first asked (``indexing.collect(..., later=True)``: ``indexing.worked_out_later``); None:
    # they are known. Read them through :meth:`resolved` (:meth:`returns_constant`).
    later: Optional[Callable[[], Tuple[Optional[str], Optional[str], List[Optional[Tuple[str, ...]]],
                                       List[Optional[Tuple[str, ...]]]]]] = \
        dataclasses.field(default=None, compare=False, repr=False)

    def resolved(self) -> "ModuleFacts":
        """These facts with ``other_dtype``, ``hooks`` and ``constant_returns`` worked out (once:
        most runs ask them of a few modules only, ``ProjectIndex.other_dtype``,
        ``project.returns_constant``)."""
        later = self.later
        if later is not None:
            self.other_dtype, self.hooks, constants, fresh = later()
            self.functions = [dataclasses.replace(f, constant_returns=c, fresh_returns=r)
                              if c is not None or f.fresh_returns is not None else f
                              for f, c, r in zip(self.functions, constants, fresh)]
            self.later = None
        return self

    def returns_fresh(self, qualname: str) -> Optional[Tuple[str, ...]]:
        """``FunctionFact.fresh_returns`` of the module's function ``qualname`` (the last one of
        that name), worked out if need be: only where the function holds a grad-off ``with``."""
        found = None
        for f in self.functions:
            if f.qualname == qualname:
                found = f.fresh_returns
        if found == ("?",):
            return self.resolved().returns_fresh(qualname)
        return found

    def returns_constant(self, qualname: str) -> Optional[Tuple[str, ...]]:
        """``FunctionFact.constant_returns`` of the module's function ``qualname`` (the last
        one of that name, as ``ProjectIndex.functions`` keeps), worked out if need be."""
        found = None
        for f in self.resolved().functions:
            if f.qualname == qualname:
                found = f.constant_returns
        return found

    def __getstate__(self) -> Dict[str, object]:
        """A copy for another process (``-j N``) takes the facts worked out, not what works them out."""
        return dict(self.resolved().__dict__)


# The summary of an installed library's function or class by its qualified name (None: not
# found, not readable, nothing to summarize); the engine's ``engine.libraries`` reads the source.
LibrarySummaries = Callable[[str], Optional[SummaryFact]]

# Summaries of the named top-level functions and classes of a module, computed on demand (the
# engine reads the file): module, names -> qualname -> summary.
SummaryLoader = Callable[[str, FrozenSet[str]], Dict[str, SummaryFact]]

class Passed(NamedTuple):
    """What one call passes, as its caller's analysis sees it (positions \"0\", \"1\"... and
    keyword names): the arguments it reads afterwards, those that require grad, those that are
    tensors, those autograd saved before the call (with the caller's reason)."""

    read_after: FrozenSet[str]
    grad: FrozenSet[str]
    tensor: FrozenSet[str]
    saved: Tuple[Tuple[str, str], ...] = ()
    refused: FrozenSet[str] = frozenset()  # (``CallFact.args_refused``)


# What the calls of a module at the given positions of its ``ModuleFacts.calls`` pass
# (``Passed``, without ``saved`` and ``refused``: ``SavingLoader``), computed on demand (the
# engine reads the file): module, key, positions -> position -> what it passes; None when the
# file is no longer what its facts were made from (``key``).
ArgumentLoader = Callable[[str, str, Tuple[int, ...]], Optional[Dict[int, Passed]]]

# (``args_saved``, ``args_refused``) of one call: what its caller's hazard analysis proves
# autograd saved, and the refused views (outputs of a multi-view op) it passes.
Saving = Tuple[Tuple[Tuple[str, str], ...], FrozenSet[str]]

# Those of the calls of a module at the given positions of its ``ModuleFacts.calls``, computed on
# demand (the engine reads the file): module, key, positions -> position -> saving; None when the
# file is no longer what its facts were made from (``key``).
SavingLoader = Callable[[str, str, Tuple[int, ...]], Optional[Dict[int, Saving]]]


def module_name(path: pathlib.Path, packages: Optional[Dict[str, List[str]]] = None,
                folders: Optional[Dict[str, pathlib.Path]] = None) -> str:
    """``pkg/sub/mod.py`` -> ``pkg.sub.mod``, walking up while folders are packages.
    ``packages``: what earlier calls found of each folder (its package names, outermost first),
    kept by a caller naming many files: files of one folder walk up once. ``folders``: kept by
    such a caller too, each folder as named -> resolved (:func:`_resolve`)."""
    path = _resolve(path, folders)
    parts = [] if path.name == "__init__.py" else [path.stem]
    return ".".join(_package_of(path.parent, {} if packages is None else packages) + parts) or path.stem


def _resolve(path: pathlib.Path, folders: Optional[Dict[str, pathlib.Path]]) -> pathlib.Path:
    """``path.resolve()``; with ``folders``, a file that is no link is its folder resolved (once
    per folder, kept there) joined with its name, as ``resolve`` makes it, without its walk up
    each folder above the file again."""
    if folders is None or path.name in ("", ".", "..") or os.path.islink(path):
        return path.resolve()
    key = str(path.parent)
    folder = folders.get(key)
    if folder is None:
        folder = folders[key] = path.parent.resolve()
    return folder / path.name


def _package_of(folder: pathlib.Path, known: Dict[str, List[str]]) -> List[str]:
    """The names of the packages ``folder`` is in, itself included, outermost first (``[]``
    where it holds no ``__init__.py``); ``known`` keeps them per folder."""
    key = str(folder)
    found = known.get(key)
    if found is None:
        found = known[key] = (_package_of(folder.parent, known) + [folder.name]
                              if (folder / "__init__.py").exists() and folder.parent != folder else [])
    return found


class ProjectIndex:
    """The joined facts of every module of a run."""

    def __init__(self, modules: Iterable[ModuleFacts], loader: Optional[SummaryLoader] = None,
                 libraries: Optional[LibrarySummaries] = None, arguments: Optional[ArgumentLoader] = None,
                 savings: Optional[SavingLoader] = None) -> None:
        self.modules: Dict[str, ModuleFacts] = {m.module: m for m in modules}
        self.functions: Dict[str, FunctionFact] = {f.qualname: f for m in self.modules.values() for f in m.functions}
        # each function's module (its ``constant_returns`` may be worked out later: read there)
        self.defined_in: Dict[str, str] = {f.qualname: m.module for m in self.modules.values() for f in m.functions}
        self.classes: Dict[str, ClassFact] = {c.qualname: c for m in self.modules.values() for c in m.classes}
        self._extended: Optional[Set[str]] = None  # the classes some class of the run extends
        self.calls: Dict[str, List[CallFact]] = {}
        self._canonical: Dict[str, str] = {}  # name -> canonical(name): many calls name one callee
        self._owners: Dict[str, Optional[str]] = {}  # name -> _module_of(name)
        for facts in self.modules.values():
            for c in facts.calls:
                if c.bound:
                    continue  # (only ``calls_from_elsewhere`` gives them, marked)
                callee = self.canonical(c.callee)
                self.calls.setdefault(callee, []).append(c if callee == c.callee else dataclasses.replace(c, callee=callee))
        self._grad_off: Dict[str, bool] = {}
        # Summaries are computed only for what another module calls or builds (cheap for a
        # run where little crosses files), module by module, when first asked for.
        self.loader = loader
        self.wanted: Dict[str, Set[str]] = _wanted(self)
        self._summaries: Dict[str, Dict[str, SummaryFact]] = {}
        self.libraries = libraries
        self._library: Dict[str, Optional[SummaryFact]] = {}
        self._dtypes: Optional[Dict[str, Optional[str]]] = None  # module -> its other_dtype
        self._hooks: Optional[Dict[str, Optional[str]]] = None  # module -> its hooks
        self._links: Optional[Dict[str, Set[str]]] = None  # module -> the modules linked to it
        self.module_names: Dict[str, str] = {}  # the run's paths -> their modules (the engine's)
        self._by_module: Optional[Dict[str, List[Tuple[str, int]]]] = None
        self._named_in: Optional[Dict[str, Set[str]]] = None  # module -> the callees of ``_by_module`` directly in it
        self._imported_by: Optional[Dict[str, List[Tuple[str, str]]]] = None  # module -> its importers
        # What the calls pass: gathered only for the calls some analysis asks about, call by call
        # (rarely: a function mutating a parameter, a parameter's grad from other files).
        self.arguments = arguments
        self._passed: Dict[Tuple[str, int], Optional[Passed]] = {}  # (module, position): None where not known
        # What autograd saved and which views the calls pass: only for the calls of a function
        # whose write into a parameter some analysis checks (``calls_saving``), call by call.
        self.savings = savings
        self._saving: Dict[Tuple[str, int], Saving] = {}

    def __getstate__(self) -> Dict[str, object]:
        """What a copy for another process takes (``-j N`` workers): the facts, none of the answers
        worked out on first use. The pool pickles the index in a thread of its own while this
        process analyses its share with it, filling those answers (``_import_links`` names its
        dict before it fills it): a copy of one half filled answered from it."""
        state = dict(self.__dict__)  # (one copy under the GIL: the attributes are all set in __init__)
        state.update({name: empty() for name, empty in _WORKED_OUT.items()})
        return state

    def _sites(self, qualname: str) -> List[Tuple[str, int]]:
        """(module, position in its ``calls``) of every call of (or reference to) ``qualname``."""
        if self._by_module is None:
            self._by_module = {}
            for facts in self.modules.values():
                for i, c in enumerate(facts.calls):
                    self._by_module.setdefault(self.canonical(c.callee), []).append((facts.module, i))
        return self._by_module.get(qualname, [])

    def calls_in_other_modules(self, qualname: str, module: str) -> List[CallFact]:
        """The calls of ``qualname`` (canonical) in modules other than ``module``, not of an
        instance (``bound``): a constructor's calls elsewhere, with what they pass as written."""
        return [c for m, i in self._sites(qualname) if m != module
                for c in (self.modules[m].calls[i],) if c.called and not c.bound]

    def _importers(self, module: str) -> List[Tuple[str, str]]:
        """(importing module, what it imports) of every name other modules of the run import
        from ``module`` (``ModuleFacts.exports`` as written, not followed), sorted."""
        if self._imported_by is None:
            self._imported_by = {}
            for facts in self.modules.values():
                for target in facts.exports.values():
                    owner = self._module_of(target)
                    if owner is not None and owner != facts.module:
                        self._imported_by.setdefault(owner, []).append((facts.module, target))
            for found in self._imported_by.values():
                found.sort()
        return self._imported_by.get(module, [])

    def _calls_passing(self, qualname: str, besides: str = "") -> List[Tuple[CallFact, bool]]:
        """(call, whether what it passes is known) of the calls of ``qualname`` made in other
        modules than ``besides``, with what they pass, the callee's name canonical. What a call
        passes is gathered for these calls only (``_gather_passed``), each once."""
        sites = [(m, i) for m, i in self._sites(qualname) if m != besides]
        _gather_passed(self, sites)
        found = []
        for module, i in sites:
            facts = self.modules[module]
            call, passed = facts.calls[i], None if facts.argued else self._passed[(module, i)]
            if passed is not None:
                call = dataclasses.replace(call, args_read_after=passed.read_after, args_grad=passed.grad,
                                           args_tensor=passed.tensor)
            if call.callee != qualname:
                call = dataclasses.replace(call, callee=qualname)
            found.append((call, facts.argued or passed is not None))
        return found

    def calls_from_elsewhere(self, qualname: str, module: str) -> List[CallFact]:
        """The calls of (or references to) ``qualname`` made in other modules than ``module``
        (what a call passes not known: none required grad)."""
        return [c for c, _ in self._calls_passing(qualname, module)]

    def calls_saving(self, qualname: str, module: str) -> List[CallFact]:
        """:meth:`calls_from_elsewhere` with what autograd saved and the refused views each call
        passes (``args_saved``, ``args_refused``): asked only where a write into a parameter of
        ``qualname`` is checked (``_calls_saving``)."""
        return _calls_saving(self, qualname, module)

    def other_dtype(self, module: str) -> Optional[str]:
        """Where the files that can hand ``module`` a tensor, or take one from it, make another
        dtype than float32, int64 and bool (the first such place, as ``module: what``); None
        when they all compute in those. Those files are the ones connected to it by imports, in
        either direction and through other files (``main`` imports ``a`` and ``b``: ``a``'s
        half tensors may reach ``b``); a module the index does not know sees every file."""
        if self._dtypes is None:
            self._dtypes = {}
        return _answer(self.modules, self._dtypes, self._import_links(), module, _other_dtype,
                       settles=lambda found: not integral_only(found))

    def hooks(self, module: str) -> Optional[str]:
        """Where the files connected to ``module`` (as for :meth:`other_dtype`: those that can
        be handed its modules) hook a module's calls (the first such place, as ``module:
        what``); None: none does. A hook reached through an enumeration (``net.modules()``)
        may be on any module of the file and sees what its calls are given."""
        if self._hooks is None:
            self._hooks = {}
        return _answer(self.modules, self._hooks, self._import_links(), module, _hooks)

    def _import_links(self) -> Dict[str, Set[str]]:
        """Modules of the run linked by an import or a call of one another, both ways (worked out
        once: ``other_dtype`` and ``hooks`` both ask)."""
        if self._links is not None:
            return self._links
        links: Dict[str, Set[str]] = {}
        self._links = links
        for facts in self.modules.values():
            targets = [self.canonical(c.callee) for c in facts.calls] + list(facts.exports.values())
            for target in targets:
                other = self._module_of(target)
                if other is not None and other != facts.module:
                    links.setdefault(facts.module, set()).add(other)
                    links.setdefault(other, set()).add(facts.module)
        return links

    def _module_of(self, qualname: str) -> Optional[str]:
        """The run's module that ``qualname`` names or lies in (the longest such name); kept per
        name (every file's digest asks it of its imports and bases, :func:`_owner`)."""
        if qualname not in self._owners:
            self._owners[qualname] = _owner(self.modules, qualname)
        return self._owners[qualname]

    def canonical(self, name: str, depth: int = 0) -> str:
        """Where a name really points: ``pkg.layers.f`` re-exported from ``pkg.layers.init``
        is ``pkg.layers.init.f`` (the longest module prefix's imports are followed)."""
        if name in self.functions or depth > 8:
            return name
        if not depth:
            found = self._canonical.get(name)
            if found is None:
                found = self._canonical[name] = self._follow(name, depth)
            return found
        return self._follow(name, depth)

    def _follow(self, name: str, depth: int) -> str:
        parts = name.split(".")
        for i in range(len(parts) - 1, 0, -1):
            facts = self.modules.get(".".join(parts[:i]))
            if facts is None:
                continue
            target = facts.exports.get(parts[i])
            if target is None:
                return name
            return self.canonical(".".join([target, *parts[i + 1:]]), depth + 1)
        return name

    def summary(self, qualname: str) -> Optional[SummaryFact]:
        """The summary of a project function or class (re-exports followed), if it has one."""
        name = self.canonical(qualname)
        module, _, short = name.rpartition(".")
        wanted = self.wanted.get(module)
        if self.loader is None or wanted is None or short not in wanted:
            return None
        found = self._summaries.get(module)
        if found is None:
            found = self._summaries[module] = self.loader(module, frozenset(wanted))
        return found.get(name)

    def library_summary(self, module: str, name: str) -> Optional[SummaryFact]:
        """The summary of the installed library's callee that ``module`` imports as ``name``
        and calls (None: not such a callee, or nothing known of it)."""
        facts = self.modules.get(module)
        qualname = facts.libraries.get(name) if facts is not None else None
        return self.library(qualname) if qualname is not None else None

    def library_name(self, module: str, name: str) -> Optional[str]:
        """The qualified name of the library callee ``module`` imports as ``name``."""
        facts = self.modules.get(module)
        return facts.libraries.get(name) if facts is not None else None

    def library(self, qualname: str) -> Optional[SummaryFact]:
        """The summary of a library callee some module of the run calls, by its qualified name."""
        if self.libraries is None:
            return None
        if qualname not in self._library:
            if not any(qualname in f.libraries.values() for f in self.modules.values()):
                return None  # only what the checked files call is looked up
            self._library[qualname] = self.libraries(qualname)
        return self._library[qualname]

    def imported(self, module: str, name: str) -> Optional[str]:
        """The project qualname that ``name`` is imported as in ``module`` (None: not imported
        from the project)."""
        facts = self.modules.get(module)
        return facts.exports.get(name) if facts is not None else None

    def imported_elsewhere(self, qualname: str, module: str) -> bool:
        """Another module than ``module`` imports or calls ``qualname``, a name in it, or a module holding it."""
        return any(module != m for m, _ in self._sites(qualname)) or any(
            module != m and _reaches(v, qualname) for m, f in self.modules.items() for v in f.exports.values())

    def knows(self, qualname: str) -> bool:
        return qualname in self.functions

    def grad_off(self, qualname: str) -> bool:
        """Every call of the function in the project runs with grad off (at least one)."""
        return self._off(qualname, set())

    def _off(self, qualname: str, seen: Set[str]) -> bool:
        known = self._grad_off.get(qualname)
        if known is not None:
            return known
        if qualname in seen:
            return False
        seen.add(qualname)
        calls = self.calls.get(qualname, [])
        result = bool(calls) and all(self._call_off(c, seen) for c in calls)
        seen.discard(qualname)
        if not seen:
            self._grad_off[qualname] = result
        return result

    def _call_off(self, call: CallFact, seen: Set[str]) -> bool:
        if call.grad_off:
            return True
        if not call.caller:
            return False
        caller = self.functions.get(call.caller)
        return caller is not None and (caller.grad_off or self._off(call.caller, seen))

    def callers_rely(self, qualname: str, param: str) -> bool:
        """Some call ignores the function's result or reads the argument for ``param`` after."""
        fact = self.functions.get(qualname)
        if fact is None:
            return False
        index = str(fact.params.index(param)) if param in fact.params else None
        calls = [call for call in self.calls.get(qualname, []) if call.called]
        if not calls:
            return False
        if any(call.result_ignored for call in calls):
            return True
        for call, known in self._calls_passing(qualname):
            if not call.called or call.bound:
                continue
            if call.result_ignored or not known or param in call.args_read_after or index in call.args_read_after:
                return True  # (what it passes not known: it may read the argument after)
        return False

    def names_other_lines(self, module: str) -> bool:
        """Whether a message of this module's analysis may name a line of another file: a
        summary it may read (of a project function or class it imports, of a library callee)
        names one (``via``: ``"sigmoid (line 5)"``). A module imported whole may be read any
        summary of: assumed so. Editors' reuse moves findings only where this is False."""
        facts = self.modules.get(module)
        if facts is None:
            return False
        for target in facts.exports.values():
            if target in self.modules:
                return True
            found = self.summary(target)
            if found is not None and any(_LINE.search(v) for v in found.via):
                return True
        for name in facts.libraries:
            found = self.library_summary(module, name)
            if found is not None and any(_LINE.search(v) for v in found.via):
                return True
        return False

    def digest_for(self, module: str, passed: bool = True) -> str:
        """What this module's analysis may ask of the index, as a digest (for cache keys);
        without ``passed``, leaving out what the calls pass (the answers that depend on it are
        then checked on their own: ``engine.asked``)."""
        return _digest(self, module, passed)


def _owner(modules: Dict[str, ModuleFacts], qualname: str) -> Optional[str]:
    """``ProjectIndex._module_of``, worked out: the longest name of ``modules`` that ``qualname``
    is or starts with (then a dot)."""
    parts = qualname.split(".")
    for end in range(len(parts), 0, -1):
        name = ".".join(parts[:end])
        if name in modules:
            return name
    return None


def _wanted(index: ProjectIndex) -> Dict[str, Set[str]]:
    """module -> the names in it whose summaries another module's analysis may ask for: those
    another module calls, and those a call hands as an argument (``handed_name``: ``RMSELoss()``
    passed to a constructor of another file, whose analysis then asks what it runs)."""
    wanted: Dict[str, Set[str]] = {}
    for facts in index.modules.values():
        for c in facts.calls:
            if not c.called or c.bound:
                continue
            module, _, name = index.canonical(c.callee).rpartition(".")
            if module in index.modules and module != facts.module:
                wanted.setdefault(module, set()).add(name)
            for _, literal, value in c.args_values:
                handed = None if literal else handed_name(value)
                module, _, name = index.canonical(handed).rpartition(".") if handed else ("", "", "")
                if module in index.modules:
                    wanted.setdefault(module, set()).add(name)
    return wanted


def referenced_elsewhere(index: ProjectIndex, qualname: str, module: str) -> bool:
    """A module other than ``module`` names ``qualname`` (canonical) other than to call it: a
    base class there, a reference handed on (``class Sub(lib.Base)``, ``make(Base)``)."""
    return any(m != module and not index.modules[m].calls[i].called for m, i in index._sites(qualname))


def string_constant(index: "ProjectIndex", qualname: str, depth: int = 0) -> bool:
    """``qualname`` (``pkg.keys.NODE_KEY``, re-exports followed) is a name a module of the run
    binds to string literals only, at its top level or through its ``from m import *``
    (the last such import that binds it: the module binding it no other way)."""
    name = index.canonical(qualname)
    module, _, short = name.rpartition(".")
    facts = index.modules.get(module)
    if facts is None or depth > 8:
        return False
    if short in facts.strings:
        return True
    if short in facts.names:
        return False
    for star in reversed(facts.stars):
        if _binds(index, star, short, depth + 1):
            return string_constant(index, f"{star}.{short}", depth + 1)
    return False


def int_constant(index: "ProjectIndex", qualname: str) -> bool:
    """``qualname`` (``pkg.rows.R``, re-exports followed) is a name a module of the run binds to int literals
    only, at its top level."""
    module, _, short = index.canonical(qualname).rpartition(".")
    return _binds_int(index, module, short, 0)


def _binds_int(index: "ProjectIndex", module: str, short: str, depth: int) -> bool:
    """``module`` binds ``short`` to int literals only, itself or through a star import (``from ._keys import *``)."""
    facts = index.modules.get(module)
    if facts is None or depth > 8:
        return False
    if short in facts.ints:
        return True
    return short not in facts.names and short not in facts.strings \
        and any(_binds_int(index, m, short, depth + 1) for m in facts.stars)


def _binds(index: "ProjectIndex", module: str, short: str, depth: int) -> bool:
    facts = index.modules.get(module)
    if facts is None or depth > 8:
        return False
    return short in facts.strings or short in facts.names or any(_binds(index, m, short, depth + 1) for m in facts.stars)


def method_of(index: "ProjectIndex", cls: str, name: str, levels: int = 4) -> Optional[str]:
    """The method ``name`` that ``cls`` (a class of the run, by qualified name) has, defined
    in it or up its chain of one base each (a few levels), by qualified name; None where a
    class on the way has another base count, a base outside the run, or binds ``name``
    otherwise than by ``def``."""
    for _ in range(levels + 1):
        found = index.classes.get(index.canonical(cls))
        if found is None or name in found.assigned:
            return None
        if f"{found.qualname}.{name}" in index.functions:
            return f"{found.qualname}.{name}"
        if len(found.bases) != 1:
            return None
        cls = found.bases[0]
    return None


def extended(index: "ProjectIndex", cls: str) -> bool:
    """Some class of the run may extend ``cls``: one of its bases ends in ``cls``'s name
    (resolved or not: ``class Sub(mod.Base)``, ``class Sub(Base)`` alike)."""
    if index._extended is None:
        index._extended = {b.rpartition(".")[2].lstrip("?") for c in index.classes.values() for b in c.bases}
    return cls.rpartition(".")[2] in index._extended


def returns_constant(index: "ProjectIndex", qualname: str) -> Optional[Tuple[str, ...]]:
    """``FunctionFact.constant_returns`` of a function of the run (canonical name)."""
    name = index.canonical(qualname)
    module = index.defined_in.get(name)
    return index.modules[module].returns_constant(name) if module is not None else None


# The answers a ``ProjectIndex`` works out on first use, and what each starts as (left out of its
# copies: ``ProjectIndex.__getstate__``).
_WORKED_OUT: Dict[str, Callable[[], object]] = {
    "_canonical": dict, "_owners": dict, "_grad_off": dict, "_summaries": dict, "_library": dict, "_dtypes": lambda: None,
    "_hooks": lambda: None, "_links": lambda: None, "_by_module": lambda: None, "_named_in": lambda: None,
    "_imported_by": lambda: None,
    "_passed": dict, "_saving": dict, "_extended": lambda: None,
}


def _gather_passed(index: ProjectIndex, sites: List[Tuple[str, int]]) -> None:
    """What the calls at ``sites`` (module, position) pass, into ``index._passed``: asked of the
    engine's loader once per module for the positions not known yet."""
    wanted: Dict[str, List[int]] = {}
    for m, i in sites:
        if not index.modules[m].argued and (m, i) not in index._passed:
            wanted.setdefault(m, []).append(i)
    for m, positions in wanted.items():
        found = index.arguments(m, index.modules[m].key, tuple(positions)) if index.arguments is not None else None
        for i in positions:  # (None: the file changed since its facts were made, or no loader)
            index._passed[(m, i)] = found.get(i) if found is not None else None


def _calls_saving(index: ProjectIndex, qualname: str, module: str) -> List[CallFact]:
    """``ProjectIndex.calls_saving``: what autograd saved and the refused views are worked out
    only for these calls (those called with grad on: the others pass none), each once."""
    sites = [(m, i) for m, i in index._sites(qualname) if m != module]
    calls = index.calls_from_elsewhere(qualname, module)  # (in the order of the sites)
    for m, i, call in _constructions(index, qualname, module):
        sites.append((m, i))
        calls.append(call)
    known = index._saving
    wanted: Dict[str, List[int]] = {}
    for (m, i), call in zip(sites, calls):
        if call.called and not call.grad_off and not index.modules[m].argued and (m, i) not in known:
            wanted.setdefault(m, []).append(i)
    for m, positions in wanted.items():
        found = index.savings(m, index.modules[m].key, tuple(positions)) if index.savings is not None else None
        for i in positions:  # (none known: the file changed since its facts were made)
            known[(m, i)] = (found or {}).get(i, ((), frozenset()))
    return [dataclasses.replace(call, args_saved=known[(m, i)][0], args_refused=known[(m, i)][1])
            if (m, i) in known else call for (m, i), call in zip(sites, calls)]


def _constructions(index: ProjectIndex, qualname: str, module: str) -> List[Tuple[str, int, CallFact]]:
    """(module, position, call) of the constructions ``Cls(a, b)`` in other modules than
    ``module`` when ``qualname`` is ``Cls.__init__`` of a class of the run: each runs
    ``Cls.__init__(obj, a, b)``, listed as an instance's call (``bound``: positions after ``self``)
    named ``qualname``. Whether the construction does run that ``__init__`` with its arguments is
    the callee's file's to say (``Calls.bound_runs``: no ``__new__``, metaclass or decorator)."""
    cls, _, name = qualname.rpartition(".")
    if name != "__init__" or cls not in index.classes:
        return []
    found = []
    for m, i in index._sites(cls):
        call = index.modules[m].calls[i]
        if m != module and call.called and not call.bound:
            passed = None if index.modules[m].argued else _passed_at(index, m, i)
            if passed is not None:
                call = dataclasses.replace(call, args_read_after=passed.read_after, args_grad=passed.grad,
                                           args_tensor=passed.tensor)
            found.append((m, i, dataclasses.replace(call, callee=qualname, bound=True)))
    return found


def _passed_at(index: ProjectIndex, module: str, position: int) -> Optional[Passed]:
    """What the call at ``position`` of ``module`` passes (``_gather_passed``, once)."""
    _gather_passed(index, [(module, position)])
    return index._passed[(module, position)]


def _digest(index: ProjectIndex, module: str, passed: bool) -> str:
    """``ProjectIndex.digest_for``: every answer of the index that the module's analysis reads.
    What reads other files, and what keys it:

    - ``knows``, ``grad_off`` of its functions (``calls``), their sites' callers, grad mode and
      use (``index.calls`` in ``leaves``): the sites of its functions, below;
    - ``callers_rely`` (``calls``), ``calls_from_elsewhere`` (``views``, with ``grad_off`` of
      each caller): what the sites pass, with ``passed``; else ``engine.asked`` notes them;
    - ``index.calls`` of its classes and functions, with the literals they pass
      (``Chains._param_values``: ``CallFact.args_values``);
    - the other modules' imports of its names (``arguments._imported_elsewhere``);
    - ``summary``/``imported`` of what it imports (and its grad-off decorator facts,
      ``grad_mode``), ``library``/``library_name`` of its
      library callees, ``other_dtype`` (``model``), ``hooks`` (``arguments``).
    """
    facts = index.modules.get(module)
    if facts is None:
        return ""
    modules = index.modules
    h = hashlib.sha256()
    for f in sorted(facts.functions, key=_qualname):
        # What a call passes is named by what its module's facts were made from (its content):
        # the key needs no call's arguments worked out. Whether its caller runs with grad off
        # (which third files may decide) goes with it: ``views`` skips such a call's arguments.
        called_at = index._sites(f.qualname)  # (most functions have none)
        calls = sorted((c.caller, c.grad_off, c.called, c.result_ignored, repr(c.args_values),
                        (_passed(modules[m], c), bool(c.caller) and index.grad_off(c.caller)) if passed else "")
                       for m, c in ((m, modules[m].calls[i]) for m, i in called_at)) if called_at else []
        h.update(repr((f.qualname, index.grad_off(f.qualname), calls)).encode())
    # The constructions of its classes (``Block(...)``) in other files: how many there are
    # decides what its analysis takes a constructor's parameter to hold
    # (``Summaries._param_values``). A class is known here by its methods; one with none has no
    # ``__init__`` whose parameters are asked about.
    # A class with no method of its own (``class Regressor(Base): pass``) keeps its base's
    # constructor: its constructions count too (``summaries.keeping_init``).
    named = set(_named_in(index).get(module, ()))
    for cls in sorted({f.qualname.rpartition(".")[0] for f in facts.functions
                       if f.qualname.count(".") > module.count(".") + 1} | named):
        found = [modules[m].calls[i] for m, i in index._sites(cls)]
        sites = sorted((c.caller, c.grad_off, c.called, c.result_ignored, repr(c.args_values)) for c in found)
        # and the summaries of what they hand it (``handed_name``: ``Trainer(net, RMSELoss())``)
        handed = sorted({n for c in found for _, lit, v in c.args_values if not lit for n in [handed_name(v)] if n})
        h.update(repr(("class", cls, sites, [(n, index.summary(n)) for n in handed])).encode())
    # Which other modules import its names (``arguments._imported_elsewhere``: a class imported
    # elsewhere, re-exported by a package say, may be called where no file shows).
    h.update(repr(("imported-by", index._importers(module))).encode())
    for name, target in sorted(facts.exports.items()):  # the summaries of what it imports
        h.update(repr((name, index.summary(target))).encode())
        known = index.functions.get(index.canonical(target))  # and whether it decorates with grad off
        if known is not None and (known.off_as_decorator is not None or known.off_as_factory is not None):
            h.update(repr(("decorates", name, known.off_as_decorator, known.off_as_factory)).encode())
    for name, target in sorted(facts.libraries.items()):  # and of the library callees it calls
        h.update(repr((name, target, index.library_summary(module, name))).encode())
    # The facts of other modules read through its imports (``string_constant``, ``method_of``,
    # ``returns_constant``): those of the modules it imports from, their ``*`` imports and the
    # modules of their classes' bases, transitively; and whether a class of the run may extend
    # one of its own classes (``extended``).
    h.update(repr(("reached", _reached_facts(index, facts))).encode())
    h.update(repr(("extended", sorted(c.qualname for c in facts.classes if extended(index, c.qualname)))).encode())
    h.update(repr(("other-dtype", index.other_dtype(module))).encode())  # the project's dtypes decide fix safety
    h.update(repr(("hooks", index.hooks(module))).encode())  # and its hooks (``arguments``)
    return h.hexdigest()[:16]


_qualname = operator.attrgetter("qualname")


def _named_in(index: ProjectIndex) -> Dict[str, Set[str]]:
    """module -> the names called or referred to anywhere in the run (``_sites``' keys) that
    lie directly in it (``pkg.mod.Block`` for ``pkg.mod``): grouped once for every module's
    digest (each digest went over all of them)."""
    if index._named_in is None:
        index._sites("")  # (fills ``_by_module``)
        named: Dict[str, Set[str]] = {}
        for q in index._by_module or {}:
            named.setdefault(q.rpartition(".")[0], set()).add(q)
        index._named_in = named
    return index._named_in


def _reached_facts(index: ProjectIndex, facts: ModuleFacts) -> List[object]:
    """``_digest``: the string constants, names, ``*`` imports, classes and constant-returning
    functions of the modules ``facts``' module reads them of (see there), by module name."""
    todo = [m for m in (index._module_of(index.canonical(t)) for t in facts.exports.values()) if m is not None]
    todo += [m for c in facts.classes for b in c.bases for m in [index._module_of(b)] if m is not None]
    seen: Set[str] = {facts.module}
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        other = index.modules[module]
        todo.extend(other.stars)
        todo.extend(m for c in other.classes for b in c.bases for m in [index._module_of(b)] if m is not None)
        todo.extend(m for m in (index._module_of(index.canonical(t)) for t in other.exports.values()) if m is not None)
    return [(m, index.modules[m].strings, index.modules[m].names, index.modules[m].stars, index.modules[m].ints,
             [(c.qualname, c.bases, c.assigned) for c in index.modules[m].classes],
             sorted((f.qualname, f.constant_returns) for f in index.modules[m].resolved().functions
                    if f.constant_returns))
            for m in sorted(seen - {facts.module})]


def _other_dtype(facts: ModuleFacts) -> Optional[str]:
    return facts.resolved().other_dtype


def _hooks(facts: ModuleFacts) -> Optional[str]:
    return facts.resolved().hooks


def _answer(modules: Dict[str, ModuleFacts], answers: Dict[str, Optional[str]], linked: Dict[str, Set[str]],
            module: str, fact: Callable[[ModuleFacts], Optional[str]],
            settles: Callable[[str], bool] = lambda found: True) -> Optional[str]:
    """``module``'s answer (:func:`_first_in_part`, kept in ``answers`` for every module of its
    part); a module the index does not know sees every file."""
    if module in modules:
        if module not in answers:
            _first_in_part(modules, answers, linked, module, fact, settles)
        return answers[module]
    return _first_of(modules, sorted(modules), fact, settles)


def _first_of(modules: Dict[str, ModuleFacts], names: List[str], fact: Callable[[ModuleFacts], Optional[str]],
              settles: Callable[[str], bool]) -> Optional[str]:
    """The first of ``names`` whose ``fact`` settles the question (``settles``: an integral
    dtype does not, a later file's half may still come), as ``module: what``; else the first
    that had one; ``fact`` is asked no further than the one that settles."""
    answer = None
    for name in names:
        found = fact(modules[name])
        if found is not None:
            if settles(found):
                return f"{name}: {found}"
            answer = answer or f"{name}: {found}"
    return answer


def _first_in_part(modules: Dict[str, ModuleFacts], answers: Dict[str, Optional[str]], linked: Dict[str, Set[str]],
                   module: str, fact: Callable[[ModuleFacts], Optional[str]],
                   settles: Callable[[str], bool]) -> None:
    """``fact`` of the modules of ``module``'s connected part, joined, into ``answers`` for each
    of them: the links go both ways, so the files a module reaches are those of its connected
    part, which share one answer (the first such place in the part, by module name, that
    ``settles``). ``fact`` is asked of the part's modules in that order up to the first that
    settles: the others' facts need not be worked out (``ModuleFacts.later``)."""
    seen, todo = {module}, [module]
    while todo:
        for other in linked.get(todo.pop(), ()):
            if other not in seen:
                seen.add(other)
                todo.append(other)
    answer = _first_of(modules, sorted(seen), fact, settles)
    for name in seen:
        answers[name] = answer


def _reaches(imported: str, qualname: str) -> bool:
    """``import a`` / ``from pkg import a`` reach ``a.Norm``; ``from a import Norm`` too (or ``Norm.x``)."""
    return imported == qualname or imported.startswith(qualname + ".") or qualname.startswith(imported + ".")


def _passed(facts: ModuleFacts, call: CallFact) -> str:
    """What ``call`` (one of ``facts``' module) passes, for ``ProjectIndex.digest_for``: the key
    of what the module's facts were made from, or (facts without one) the arguments themselves."""
    return facts.key if facts.key else repr((sorted(call.args_read_after), sorted(call.args_grad),
                                             sorted(call.args_tensor), call.args_saved,
                                             sorted(call.args_refused)))


def library_callees(module: ast.Module) -> Dict[str, str]:
    """For a file checked alone (no project around it): the names it imports with an absolute
    ``from ... import`` (not from torch or the standard library) and calls, as ``collect``
    finds them: local name -> qualified name. One walk of the tree, no analysis."""
    imported: Dict[str, str] = {}
    top = {s.name for s in module.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    called: Set[str] = set()
    for node in ast.walk(module):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module and node.names[0].name != "*":
            for a in node.names:
                imported.setdefault(a.asname or a.name, f"{node.module}.{a.name}")
        elif isinstance(node, ast.Import):
            for a in node.names:  # `import x` binds a module, which takes the name first
                imported.setdefault(a.asname or a.name.split(".")[0], "")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            called.add(node.func.id)
    return {name: target for name, target in imported.items()
            if target and name in called and name not in top and is_library(target)}


def is_library(qualname: str) -> bool:
    """Looked up in installed libraries: not torch (measured facts), not the standard library."""
    top = qualname.split(".")[0]
    return top != "torch" and top not in sys.stdlib_module_names
