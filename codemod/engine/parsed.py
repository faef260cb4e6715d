"""Parsed files handed from a run's index pass to its file pass, so that a file is parsed once.

A run with a project index reads every file twice: ``engine.project`` builds each file's model
for the index, then ``engine.pipeline`` analyses each file with the index. Parsing and indexing
a file (``analysis.source.Source``) was a third of a cold ``check``. The index pass keeps the
sources the file pass will ask for (:func:`keep`), up to :data:`BUDGET` bytes of source text
(a parsed file takes about 35 times its size), and the file pass takes each one back once
(:func:`take`), by content: an edited file (other bytes) is parsed anew. Nothing analyses a
source's tree in place, so one parsed in the index pass is the one the file pass would make.
With a source goes what the index pass's model worked out from it alone (``model.Shared``: its
tree, bindings, import names and classes), which the file pass's model takes over.
"""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING, Dict, Optional, Set, Tuple

if TYPE_CHECKING:  # (a rerun answered from the cache imports no analysis)
    from codemod.analysis.model import Shared
    from codemod.analysis.source import Source

BUDGET = 8 << 20  # bytes of source text kept at most (about 280 MB parsed)

_kept: Dict[Tuple[bytes, tuple], Tuple[Source, Optional[Shared]]] = {}
_size = [0]
_taken: Set[Tuple[bytes, tuple]] = set()  # kept sources the file pass took (each once)
# Files the index pass parsed but the file pass will not analyse (no candidate): it parses them
# only to report one that does not parse, which these do (64 of the 221 files of torch's nn,
# optim, autograd and distributions; about 4% of a cold ``check``).
_parses: Set[bytes] = set()
_parses_size = [0]
# Whether this process is a one-shot run (``pipeline.tune_gc(one_shot=True)``): only such a run
# freezes what it keeps. Off unless said: a process that lives on must never freeze.
_freezes = [False]


def one_shot(on: bool) -> None:
    """Say whether this process ends with its run (then kept sources are frozen, see :func:`keep`)."""
    _freezes[0] = on


def keep(data: bytes, source: Source, shared: Optional[Shared] = None) -> bool:
    """Keep ``source`` (parsed from ``data``) for the file pass, if the budget allows, with the
    parts of a model of it that the file pass's model may take over. False: not kept (over budget)."""
    if _size[0] + len(data) > BUDGET:
        return False
    key = (data, tuple(source.candidates))
    if key not in _kept:
        _kept[key] = (source, shared)
        _size[0] += len(data)
        # Out of the cyclic collector's sight (as ``pipeline.tune_gc`` does with what was
        # imported): the collection after each file scanned every kept tree once more, which
        # cost about what parsing it again does. Reference counts still free it once dropped.
        # Only in a one-shot run: a long-lived process would keep every cycle alive now.
        if _freezes[0]:
            gc.freeze()
    return True


def parses(data: bytes) -> None:
    """``data`` parsed (``Source(data)`` raised nothing), if the budget allows keeping it."""
    if data not in _parses and _parses_size[0] + len(data) <= BUDGET:
        _parses.add(data)
        _parses_size[0] += len(data)


def known_to_parse(data: bytes) -> bool:
    """Whether :func:`parses` was told ``data`` parses (False: parse it to know)."""
    return bool(_parses) and data in _parses


def peek(data: bytes, candidate_types: tuple) -> Optional[Tuple[Source, Optional[Shared]]]:
    """The source kept for ``data`` with these candidate types and its shared model parts, left
    kept (None: not kept). The parts only gain what they work out from the source alone."""
    return _kept.get((data, tuple(candidate_types))) if _kept else None


def take(data: bytes, candidate_types: tuple) -> Optional[Tuple[Source, Optional[Shared]]]:
    """The source kept for ``data`` with these candidate types and its shared model parts,
    once (None: parse it). It stays kept for :func:`peek` until :func:`clear`: another file's
    analysis may ask what this file's calls pass or its summaries later in the run, worked out
    on demand from its source (``engine.project``), which was parsed again when dropped here (a
    third of the files of torch's optim asked so). Kept longer, not more: the index pass kept
    them all before the first is taken."""
    if not _kept:
        return None
    key = (data, tuple(candidate_types))
    if key in _taken:
        return None
    found = _kept.get(key)
    if found is not None:
        _taken.add(key)
    return found


def clear() -> None:
    """Forget every kept source (a run's end; a later run reads the files anew)."""
    _kept.clear()
    _taken.clear()
    _size[0] = 0
    _parses.clear()
    _parses_size[0] = 0
