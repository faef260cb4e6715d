"""Building the project-wide index for a run: every ``.py`` file of the run contributes its facts
(``analysis.indexing.collect``), cached by content like per-file results.

A file's analysis then knows its functions' callers in the other files (grad mode across calls,
mutation contracts). Files checked alone (an editor buffer, stdin) have no index: their own
calls are all the analysis sees, and it says nothing it cannot see.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import hashlib
import json
import pathlib
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Tuple

from codemod.analysis.project import (
    CallFact,
    ClassFact,
    FunctionFact,
    ModuleFacts,
    Passed,
    ProjectIndex,
    Saving,
    library_callees,
    module_name,
)
from codemod.engine.cache import load_json, store_json
from codemod.engine.fileio import read_source
from codemod.engine.libraries import Libraries
from codemod.engine.summary_json import summary_from_json, summary_to_json

_VERSION = b"project-facts-21"  # JSON entries (3: summaries, kept apart; 4: library callees; 5: other dtype;
# 6: what calls pass, kept apart; 7: grad-off decorators; 8: `A, B = mod.A, mod.B` aliases;
# 9: summaries say whether a class owns parameters and whether the callee keeps its result;
# 10: what calls pass says which arguments are tensors; 11: and which autograd saved before the call;
# calls of instances of other modules' classes, marked `bound`; summaries say a function returns the
# outputs of a multi-view op splitting a parameter, and what calls pass which arguments are such outputs;
# 12: what autograd saved and the refused views, call by call, apart from what calls pass;
# 13: each call's arguments as written, with the literals' values; 14: summaries say which torch modules a
# builder function returns; 15: summaries say for whose gradient each input is saved; 16: what an argument
# that is no literal names, where its file can say: `project.HANDED`; 17: functions say whether they return
# constants when handed constants, modules their classes' bases, string constants, names and `*` imports;
# 18: modules of the run imported whole at the top level (`import keys as k`) are among the exports;
# 19: functions say which of their returns are fresh (computed with grad off, from nothing handed in);
# 20: modules their int constants; 21: summaries say a function stores nothing past its call)


Mapper = Callable[[Callable[[str], Optional[ModuleFacts]], List[str]], List[Optional[ModuleFacts]]]


def build_index(files: Iterable[str], cache_dir: Optional[str] = None,
                mapper: Optional[Mapper] = None, libraries: Optional[Libraries] = None,
                keep_sources: bool = False, writing: bool = False) -> Optional[ProjectIndex]:
    """The index of the ``.py`` files among ``files``; None for fewer than two (no other
    callers), unless ``libraries`` (``engine.libraries``: installed libraries' summaries) has
    something to say of the one file's library callees. ``mapper(work, paths)``: how to run
    ``work`` over the paths (the CLI passes its worker pool; default: one after the other).
    ``keep_sources``: the files will be processed next (``engine.pipeline``) in this process:
    keep what was parsed for them (``engine.parsed``; the caller clears it after). ``writing``:
    the run rewrites files while it still analyses others (``fix``): what the index works out
    on demand from a file (what its calls pass, its summaries) is worked out from the content
    its facts were made from, kept now (:func:`_contents`), never from the file as it is when
    asked, which the run may have rewritten by then, or not yet: the answers would depend on
    the order of the files and of the ``-j`` processes."""
    paths = [f for f in files if f.endswith(".py")]
    if len(paths) < 2:
        return _alone(paths[0], libraries) if paths and libraries is not None else None
    packages: Dict[str, List[str]] = {}  # folder -> its packages: a folder's files walk up once
    folders: Dict[str, pathlib.Path] = {}  # and resolve their folder once
    names = {p: module_name(pathlib.Path(p), packages, folders) for p in paths}
    project = frozenset(names.values())
    salt = _salt(project, cached=cache_dir is not None)
    work = functools.partial(module_facts, project=project, cache_dir=cache_dir, salt=salt,
                             keep=keep_sources, names=names)
    found = (mapper or _serial)(work, paths)
    by_module = {m: p for p, m in names.items()}
    contents = _contents(found, by_module, salt) if writing else None
    loader = functools.partial(module_summaries, paths=by_module, cache_dir=cache_dir, salt=salt, contents=contents)
    arguments = functools.partial(module_arguments, paths=by_module, project=project, cache_dir=cache_dir, salt=salt,
                                  contents=contents)
    savings = functools.partial(module_savings, paths=by_module, project=project, cache_dir=cache_dir, salt=salt,
                                contents=contents)
    index = ProjectIndex((f for f in found if f is not None), loader, libraries, arguments, savings)
    index.module_names = names  # each path's module, worked out once (it looks up the folders)
    return index


def _contents(found: List[Optional[ModuleFacts]], paths: Dict[str, str], salt: bytes) -> Dict[str, bytes]:
    """module -> its file's bytes, read again now (before the run writes anything) for each
    module whose facts were made from these bytes (``ModuleFacts.key``); a file changed since
    (by someone else) is left out: what is worked out on demand from it is not known."""
    contents: Dict[str, bytes] = {}
    for facts in found:
        path = paths.get(facts.module) if facts is not None else None
        if path is None:
            continue
        try:
            data = read_source(pathlib.Path(path))
        except OSError:
            continue
        if _key(salt, facts.module, data) == facts.key:
            contents[facts.module] = data
    return contents


def _read(module: str, paths: dict, contents: Optional[Dict[str, bytes]]) -> Optional[bytes]:
    """The bytes of ``module``'s file that what the index works out on demand is worked out
    from: those kept for a writing run (``build_index``'s ``writing``), else the file as it is."""
    if contents is not None:
        return contents.get(module)
    path = paths.get(module)
    try:
        return read_source(pathlib.Path(path)) if path else None
    except OSError:
        return None


def _alone(path: str, libraries: Libraries) -> Optional[ProjectIndex]:
    """A file checked alone: an index of its library callees only (no callers: its own calls
    are all its analysis sees, as without an index); None when it calls none (or cannot be
    read or parsed: reported when the file itself is processed). One ``ast`` walk, not cached."""
    try:
        found = library_callees(ast.parse(read_source(pathlib.Path(path))))
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError, LookupError, RecursionError):
        return None
    if not found:
        return None
    return ProjectIndex([ModuleFacts(module_name(pathlib.Path(path)), [], [], {}, found)], None, libraries)


def module_summaries(module: str, wanted: frozenset, paths: dict, cache_dir: Optional[str], salt: bytes,
                     contents: Optional[Dict[str, bytes]] = None) -> dict:
    """Summaries of the ``wanted`` top-level names of ``module`` (``analysis.summaries``),
    computed from its file (``_read``) when another file of the run calls them; cached like its facts."""
    data = _read(module, paths, contents)
    if data is None:
        return {}
    folder = pathlib.Path(cache_dir) / "project" if cache_dir else None
    key = hashlib.sha256(salt + b"summaries\0" + module.encode() + b"\0" + "\0".join(sorted(wanted)).encode()
                         + b"\0" + data).hexdigest()
    if folder is not None:
        try:  # JSON, never pickle
            raw = load_json(folder / key)
            return {str(q): summary_from_json(v) for q, v in raw.items()}
        except Exception:  # noqa: BLE001 - a missing, unreadable or malformed entry is a miss
            pass
    from codemod.analysis.model import SemanticModel
    from codemod.analysis.indexing import summaries_of
    from codemod.analysis.source import Source
    from codemod.engine import parsed
    from codemod.rules.registry import node_types

    try:
        kept = parsed.peek(data, node_types())  # still kept for the file pass: not parsed again
        source, shared = kept if kept is not None else (Source(data), None)
        model = SemanticModel(source, shared=shared)
        found = summaries_of(model, module, wanted)
    except (SyntaxError, ValueError, UnicodeDecodeError, LookupError, RecursionError):
        return {}
    if folder is not None:
        store_json(folder / key, {q: summary_to_json(s) for q, s in found.items()})
    return found


def module_arguments(module: str, key: str, positions: Tuple[int, ...], paths: dict, project: frozenset,
                     cache_dir: Optional[str], salt: bytes,
                     contents: Optional[Dict[str, bytes]] = None) -> Optional[Dict[int, Passed]]:
    """What the calls of ``module`` at ``positions`` pass (``analysis.indexing.call_arguments``),
    computed from its file when some analysis asks about them; None when the file is no longer
    what its facts were made from (``key``). Cached call by call, like its facts."""
    def from_json(raw: dict) -> Passed:
        return Passed(frozenset(_texts(raw["read"])), frozenset(_texts(raw["grad"])), frozenset(_texts(raw["tensor"])))

    def to_json(passed: Passed) -> dict:
        return {"read": sorted(passed.read_after), "grad": sorted(passed.grad), "tensor": sorted(passed.tensor)}

    return _per_call(module, key, positions, paths, project, cache_dir, salt, b"arguments", "call_arguments",
                     from_json, to_json, contents)


def module_savings(module: str, key: str, positions: Tuple[int, ...], paths: dict, project: frozenset,
                   cache_dir: Optional[str], salt: bytes,
                   contents: Optional[Dict[str, bytes]] = None) -> Optional[Dict[int, Saving]]:
    """What autograd saved and the refused views each call of ``module`` at ``positions`` passes
    (``analysis.indexing.call_savings``), computed from its file when an analysis checks a write
    into the callee's parameter; None when the file is no longer what its facts were made from
    (``key``). Cached call by call, like its facts."""
    def from_json(raw: dict) -> Saving:
        return tuple((str(name), str(why)) for name, why in raw["saved"]), frozenset(_texts(raw["refused"]))

    def to_json(saving: Saving) -> dict:
        return {"saved": [list(x) for x in saving[0]], "refused": sorted(saving[1])}

    return _per_call(module, key, positions, paths, project, cache_dir, salt, b"saving", "call_savings",
                     from_json, to_json, contents)


def _per_call(module: str, key: str, positions: Tuple[int, ...], paths: dict, project: frozenset,
              cache_dir: Optional[str], salt: bytes, kind: bytes, compute: str, from_json: Callable,
              to_json: Callable, contents: Optional[Dict[str, bytes]] = None) -> Optional[dict]:
    """The answers of ``analysis.indexing``'s function ``compute`` (model, module, modules,
    is_package, positions -> position -> answer; imported on a miss only: a rerun answered from
    the cache imports no analysis) for the calls of ``module`` at ``positions``, each cached
    as JSON under the module's key, ``kind`` and its position; None when the file is no longer
    what its facts were made from (``key``). The file is read by ``_read``."""
    path = paths.get(module)
    data = _read(module, paths, contents)
    if path is None or data is None or _key(salt, module, data) != key:
        return None
    folder = pathlib.Path(cache_dir) / "project" if cache_dir else None
    entries = {i: hashlib.sha256(salt + kind + b"\0" + key.encode() + b"\0%d" % i).hexdigest() for i in positions}
    found: dict = {}
    for i, entry in entries.items() if folder is not None else ():
        try:  # JSON, never pickle
            raw = load_json(folder / entry)
            if raw["module"] != module:
                raise ValueError(module)
            found[i] = from_json(raw)
        except Exception:  # noqa: BLE001 - a missing, unreadable or malformed entry is a miss
            pass
    missing = [i for i in positions if i not in found]
    if not missing:
        return found
    from codemod.analysis import indexing
    from codemod.analysis.model import SemanticModel
    from codemod.analysis.source import Source
    from codemod.engine import parsed
    from codemod.rules.registry import node_types

    try:
        kept = parsed.peek(data, node_types())  # still kept for the file pass: not parsed again
        source, shared = kept if kept is not None else (Source(data), None)
        made = getattr(indexing, compute)(SemanticModel(source, shared=shared), module, project, pathlib.Path(path).name == "__init__.py",
                       missing)
    except (SyntaxError, ValueError, UnicodeDecodeError, LookupError, RecursionError):
        return None
    for i, answer in made.items():
        found[i] = answer
        if folder is not None:
            store_json(folder / entries[i], {"module": module, **to_json(answer)})
    return found


def _texts(values) -> List[str]:
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise ValueError(values)
    return values


def _key(salt: bytes, module: str, data: bytes) -> str:
    """What a module's facts are cached under (and named by in ``ProjectIndex.digest_for``)."""
    return hashlib.sha256(salt + module.encode() + b"\0" + data).hexdigest()


def _serial(work: Callable[[str], Optional[ModuleFacts]], paths: List[str]) -> List[Optional[ModuleFacts]]:
    return [work(p) for p in paths]


def module_facts(path: str, project: frozenset, cache_dir: Optional[str], salt: bytes,
                 keep: bool = False, names: Optional[dict] = None) -> Optional[ModuleFacts]:
    """What one file contributes to the index (None when it cannot be read or parsed: the file
    itself is reported when it is processed). ``keep``: keep the parsed file for its processing
    (``engine.parsed``); ``names``: path -> module, where known."""
    p = pathlib.Path(path)
    try:
        data = read_source(p)  # a regular file only: a FIFO would block the run
    except OSError:
        return None
    folder = pathlib.Path(cache_dir) / "project" if cache_dir else None
    module = (names or {}).get(path) or module_name(p)
    return _facts(data, module, project, p.name == "__init__.py", folder, salt, keep)


def _facts(data: bytes, module: str, project: frozenset, is_package: bool,
           folder: Optional[pathlib.Path], salt: bytes, keep: bool = False) -> Optional[ModuleFacts]:
    key = _key(salt, module, data)
    if folder is not None:
        try:  # JSON, never pickle: a cache folder shipped with a repository must not run code
            return facts_from_json(load_json(folder / key), key)
        except Exception:  # noqa: BLE001 - a missing, unreadable or malformed entry is a miss
            pass
    from codemod.analysis.indexing import collect
    from codemod.analysis.model import SemanticModel
    from codemod.analysis.source import Source
    from codemod.engine import parsed
    from codemod.engine.pipeline import will_parse
    from codemod.rules.registry import node_types

    handed_on, keep = keep, keep and will_parse(data)
    try:
        # Filed by the rules' node types when kept: the Source the file pass would make.
        source = Source(data, node_types()) if keep else Source(data)
        model = SemanticModel(source)
    except (SyntaxError, ValueError, UnicodeDecodeError, LookupError, RecursionError):
        return None  # reported when the file itself is processed
    held = False  # the source stays in memory for the file pass
    if keep:
        held = parsed.keep(data, source, model.shared())
    elif handed_on:  # not analysed by the file pass: it need not parse it again
        parsed.parses(data)
    # (what calls pass: asked for, module_arguments; the other dtype and hooks: worked out from
    # the source when asked, where it is held anyway and no cache entry is written now)
    found = collect(model, module, project, is_package, arguments=False, later=held and folder is None)
    found.key = key
    if folder is not None:
        store_json(folder / key, facts_to_json(found))
    return found


def facts_to_json(facts: ModuleFacts) -> dict:
    facts = facts.resolved()
    return {
        "module": facts.module, "exports": facts.exports, "libraries": facts.libraries,
        "other_dtype": facts.other_dtype, "hooks": facts.hooks,
        "functions": [[f.qualname, list(f.params), f.grad_off, _needs_json(f.off_as_decorator),
                       _needs_json(f.off_as_factory), _needs_json(f.constant_returns), _needs_json(f.fresh_returns)]
                      for f in facts.functions],
        "classes": [[c.qualname, list(c.bases), list(c.assigned)] for c in facts.classes],
        "strings": list(facts.strings), "names": list(facts.names), "stars": list(facts.stars), "ints": list(facts.ints),
        "calls": [[c.callee, c.caller, c.grad_off, c.called, c.result_ignored, c.bound,
                   [list(v) for v in c.args_values]] for c in facts.calls],
    }


def _needs_json(needs):
    return None if needs is None else list(needs)


def facts_from_json(raw: dict, key: str) -> ModuleFacts:
    """The facts a cache entry (``key``) holds, without what the calls pass (``argued``: no);
    raises (a miss) on anything of another shape. (A rerun reads one per file: the checks are
    written out, not one call per value; JSON makes ``str`` and ``bool`` themselves, no subclass.)"""
    def text(v):
        if type(v) is not str:
            raise ValueError(v)
        return v

    def texts(values) -> tuple:
        found = tuple(values)
        for v in found:
            if type(v) is not str:
                raise ValueError(v)
        return found

    def needs(v):
        return None if v is None else texts(v)

    def values(found) -> tuple:
        found = tuple(tuple(v) for v in found)
        for k, lit, v in found:
            if type(k) is not str or type(lit) is not bool or not (v is None or type(v) in _LITERAL):
                raise ValueError(v)
        return found

    def call(a, b, c, d, e, g, passed) -> CallFact:
        if type(a) is not str or type(b) is not str or type(c) is not bool or type(d) is not bool \
                or type(e) is not bool or type(g) is not bool:
            raise ValueError(a)
        return _call_fact(a, b, c, d, e, g, values(passed))

    def function(q, params, off, d, f, constant, fresh) -> FunctionFact:
        if type(q) is not str or type(off) is not bool:
            raise ValueError(q)
        return FunctionFact(q, texts(params), off, needs(d), needs(f), needs(constant), needs(fresh))

    exports, libraries = raw["exports"], raw["libraries"]
    if not isinstance(exports, dict) or not isinstance(libraries, dict):
        raise ValueError(exports)
    return ModuleFacts(
        text(raw["module"]),
        [function(*f) for f in raw["functions"]],
        [call(*c) for c in raw["calls"]],
        {text(k): text(v) for k, v in exports.items()},
        {text(k): text(v) for k, v in libraries.items()},
        None if raw["other_dtype"] is None else text(raw["other_dtype"]),
        argued=False, key=key, hooks=None if raw["hooks"] is None else text(raw["hooks"]),
        classes=[ClassFact(text(q), texts(bases), texts(assigned)) for q, bases, assigned in raw["classes"]],
        strings=texts(raw["strings"]), names=texts(raw["names"]), stars=texts(raw["stars"]), ints=texts(raw["ints"]),
    )


_CALL_FIELDS = {f.name: f.default for f in dataclasses.fields(CallFact)}  # (all plain values)


def _call_fact(callee: str, caller: str, grad_off: bool, called: bool, result_ignored: bool, bound: bool,
               args_values: tuple) -> CallFact:
    """``CallFact(callee, caller, grad_off, called, result_ignored, frozenset(), bound=bound,
    args_values=args_values)``, made as that makes it (its fields in their order, the others
    their defaults) without a frozen dataclass's ``__init__``, one ``object.__setattr__`` per
    field: a rerun reads every call of every file from the cache (a third of reading the facts)."""
    fact = object.__new__(CallFact)
    fact.__dict__.update(_CALL_FIELDS)
    fact.__dict__.update(callee=callee, caller=caller, grad_off=grad_off, called=called,
                         result_ignored=result_ignored, args_read_after=_NONE, bound=bound, args_values=args_values)
    return fact


_NONE: FrozenSet[str] = frozenset()
_LITERAL = (str, bool, int, float)  # (the types of a literal's value; ``type``, not ``isinstance``: JSON's own)


def _salt(project: frozenset, cached: bool = True) -> bytes:
    """The facts of one file depend on the tool's code and on which modules are in the run.
    Without ``cached`` (a run with no cache folder) the keys never leave the run's processes,
    which all run this code: the code is left out (reading and hashing every source file of the
    tool was about 1% of a cold ``check --no-cache``)."""
    from codemod.engine.cache import _code_digest

    h = hashlib.sha256(_VERSION + (_code_digest().encode() if cached else b"\0uncached"))
    for name in sorted(project):
        h.update(name.encode() + b"\0")
    return h.digest()
