"""The index's answers a file's result depends on through what other files' calls pass.

The result cache keys a file by its index digest without what the calls of its functions pass
(``ProjectIndex.digest_for(module, passed=False)``): gathering that for every caller is what the
index leaves out (``analysis.project``: on demand). The few questions whose answers depend on
it (``callers_rely``, ``calls_from_elsewhere``, ``calls_saving``, ``imported_elsewhere``) are noted while the file is analysed
(:class:`Asking`) and kept with its result; a later run takes the result only where the index
answers them alike (:func:`answers_hold`). An edit of a caller that changes nothing it passes
leaves the callee's result cached.
"""

from __future__ import annotations

from typing import Any, List

from codemod.analysis.project import CallFact, ProjectIndex


class Asking:
    """``index`` as one file's analysis sees it, noting the questions about what calls pass."""

    def __init__(self, index: ProjectIndex) -> None:
        self._index = index
        self.asked: List[list] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._index, name)

    def callers_rely(self, qualname: str, param: str) -> bool:
        answer = self._index.callers_rely(qualname, param)
        self.asked.append(["rely", qualname, param, answer])
        return answer

    def calls_from_elsewhere(self, qualname: str, module: str) -> List[CallFact]:
        calls = self._index.calls_from_elsewhere(qualname, module)
        self.asked.append(["elsewhere", qualname, module, _shown(self._index, calls)])
        return calls

    def calls_saving(self, qualname: str, module: str) -> List[CallFact]:
        calls = self._index.calls_saving(qualname, module)
        self.asked.append(["saving", qualname, module, _shown(self._index, calls)])
        return calls

    def imported_elsewhere(self, qualname: str, module: str) -> bool:
        answer = self._index.imported_elsewhere(qualname, module)
        self.asked.append(["imported", qualname, module, answer])
        return answer


def _shown(index: ProjectIndex, calls: List[CallFact]) -> list:
    """The calls as their reader sees them: what they pass, and whether their callers run with
    grad off (which other files than the caller's may decide)."""
    return [[c.caller, c.grad_off, c.called, c.result_ignored, sorted(c.args_read_after), sorted(c.args_grad),
             sorted(c.args_tensor), [list(x) for x in c.args_saved], c.bound, sorted(c.args_refused),
             bool(c.caller) and index.grad_off(c.caller)] for c in calls]


def answers_hold(index: ProjectIndex, asked: object) -> bool:
    """Whether ``index`` answers the noted questions (a cache entry's, as JSON) as noted."""
    if not isinstance(asked, list):
        return False
    try:
        for kind, qualname, what, answer in asked:
            if kind == "rely":
                if index.callers_rely(qualname, what) != answer:
                    return False
            elif kind == "imported":
                if index.imported_elsewhere(qualname, what) != answer:
                    return False
            elif kind == "saving":
                if _shown(index, index.calls_saving(qualname, what)) != answer:
                    return False
            elif kind != "elsewhere" or _shown(index, index.calls_from_elsewhere(qualname, what)) != answer:
                return False
    except (TypeError, ValueError, KeyError, AttributeError):  # an entry of another shape: a miss
        return False
    return True
