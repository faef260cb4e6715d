"""Summary facts as JSON for the caches (never pickle): one format for the project index's
entries (``engine.project``) and the installed libraries' entries (``engine.libraries``)."""

from __future__ import annotations

from codemod.analysis.project import SummaryFact

_STATES = ("yes", "no", "unknown")
_RETURNS = ("input", "view", "multi-view", "fresh", "unknown")


def summary_to_json(s: SummaryFact) -> list:
    return [s.name, list(s.inputs), s.output, s.returns, s.returned_input, list(s.mutates), list(s.via), s.of,
            s.parametric, s.keeps, None if s.builds is None else list(s.builds),
            [None if u is None else list(u) for u in s.saved_for], list(s.params), s.stores_nothing]


def summary_from_json(raw: list) -> SummaryFact:
    """The fact a cache entry holds; raises ``ValueError`` (a miss) on anything of another shape."""
    name, inputs, output, returns, returned, mutates, via, of, parametric, keeps, builds, saved_for, params, stores = raw
    if not (isinstance(name, str) and of in ("class", "function") and all(i in _STATES for i in inputs) and output in _STATES
            and returns in _RETURNS and (returned is None or type(returned) is int)
            and all(type(m) is int for m in mutates) and all(isinstance(v, str) for v in via)
            and type(parametric) is bool and type(keeps) is bool
            and (builds is None or isinstance(builds, list) and all(isinstance(b, str) for b in builds))
            and isinstance(saved_for, list) and all(u is None or isinstance(u, list) and all(type(j) is int for j in u)
                                                     for u in saved_for)
            and isinstance(params, list) and all(isinstance(p, str) for p in params) and type(stores) is bool):
        raise ValueError(raw)
    return SummaryFact(name, tuple(inputs), output, returns, returned, tuple(mutates), tuple(via), of, parametric, keeps,
                       None if builds is None else tuple(builds),
                       tuple(None if u is None else tuple(u) for u in saved_for), tuple(params), stores)
