"""The rules, found by looking in ``codemod/rules/``, and everything derived from them.

A rule is one module here defining one :class:`~codemod.rules.base.Rule` subclass with a
``CODE``. From those classes this module derives what used to be kept by hand in six places:
the rule table (codes and names, both hazard forms included), the ``ast`` node types the walk files
for the rules, the dispatch table of ``visit_<Node>`` methods, the text screen run before
parsing and the node screen run after it.
"""

from __future__ import annotations

import ast
import functools
import importlib
import pkgutil
import re
from typing import Callable, Dict, List, NamedTuple, Tuple, Type

import codemod.rules as _package
from codemod.rules.base import Rule, hazard_code, possible_code

_NOT_RULES = {"base", "registry", "safety"}


class RuleInfo(NamedTuple):
    """One line of the rule table."""

    code: str
    name: str
    summary: str
    rule: Type[Rule]
    hazard: bool  # a hazard form (IPF1xx proven, IPF2xx possible), not the plain candidate
    possible: bool = False  # the IPF2xx form: the conflict rests on what the analysis cannot see


@functools.lru_cache(maxsize=None)
def rules() -> tuple:
    """Every rule class in the package, ordered by code."""
    for info in pkgutil.iter_modules(_package.__path__):
        if not info.name.startswith("_") and info.name not in _NOT_RULES:
            importlib.import_module(f"{_package.__name__}.{info.name}")
    found = [cls for cls in _subclasses(Rule) if cls.CODE]
    codes = [cls.CODE for cls in found]
    duplicated = {c for c in codes if codes.count(c) > 1}
    if duplicated:
        raise RuntimeError(f"rule codes defined twice: {', '.join(sorted(duplicated))}")
    return tuple(sorted(found, key=lambda cls: cls.CODE))


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def summary(rule: Type[Rule]) -> str:
    """The first line of the rule's docstring."""
    return (rule.__doc__ or "").strip().splitlines()[0] if rule.__doc__ else ""


def documentation(rule: Type[Rule]) -> str:
    """The rule's docstring, dedented: summary and Ruff-style sections."""
    import inspect

    return inspect.cleandoc(rule.__doc__ or "")


class UnusedSuppression:
    """Report suppression comments of ours that suppress nothing.

    ## What it does
    Reports a `# noqa: IPFxxx`, `# inplacefix: ignore[IPFxxx]` or file-level
    `# inplacefix: noqa: IPFxxx` comment naming a code that reports nothing where the comment
    applies (and a bare `# inplacefix: ignore` / `# inplacefix: noqa` that suppresses nothing,
    when every code is selected). Only codes the run selects are judged; other tools' codes,
    and a bare `# noqa`, are left alone.

    ## Why is this bad?
    A suppression that outlived its finding (the code was fixed, or moved) hides the next
    finding that appears on that line.

    ## Example
    ```python
    h = h + 1  # noqa: IPF101
    ```

    Use instead:
    ```python
    h = h + 1
    ```

    ## Fix safety
    No fix is offered: remove the code (or the comment) by hand. Off by default; select it
    with `--extend-select IPF900`.
    """

    CODE = "IPF900"
    NAME = "unused-noqa"


UNUSED_SUPPRESSION = UnusedSuppression.CODE


@functools.lru_cache(maxsize=None)
def table() -> Dict[str, RuleInfo]:
    """Code -> :class:`RuleInfo`, the plain codes and their hazard forms."""
    out: Dict[str, RuleInfo] = {}
    for rule in rules():
        out[rule.CODE] = RuleInfo(rule.CODE, rule.NAME, summary(rule), rule, False)
    for rule in rules():
        code = hazard_code(rule.CODE)
        text = f"{summary(rule)} ({rule.HAZARD_FORM})"
        out[code] = RuleInfo(code, f"{rule.NAME}-hazard", text, rule, True)
    for rule in rules():
        if not rule.POSSIBLE_FORM:
            continue
        code = possible_code(rule.CODE)
        text = f"{summary(rule)} (where it may modify a tensor autograd saved; off by default)"
        out[code] = RuleInfo(code, f"{rule.NAME}-possible-hazard", text, rule, True, True)
    out[UNUSED_SUPPRESSION] = RuleInfo(UNUSED_SUPPRESSION, UnusedSuppression.NAME, summary(UnusedSuppression),
                                       UnusedSuppression, False)  # not a Rule: reported by the engine
    return dict(sorted(out.items()))


def codes_of(rule: Type[Rule]) -> Tuple[str, ...]:
    """The rule's codes: plain (IPF0xx), proven hazard (IPF1xx), possible hazard (IPF2xx, where
    the rule has that form); IPF900 alone for :class:`UnusedSuppression`."""
    if rule is UnusedSuppression:
        return (UNUSED_SUPPRESSION,)
    if not rule.POSSIBLE_FORM:
        return rule.CODE, hazard_code(rule.CODE)
    return rule.CODE, hazard_code(rule.CODE), possible_code(rule.CODE)


def rule_name(code: str) -> str:
    """The rule's name for a code (``IPF101`` -> ``augmented-assignment-hazard``)."""
    info = table().get(code)
    return info.name if info else code


DOCS = "https://inplacefix.readthedocs.io/en/latest"


def rule_url(name: str) -> str:
    """The documentation page of the rule named ``name`` (``augmented-assignment``): one page
    per rule, generated from its class's docs (``docs/rules/<rule-name>/``)."""
    return f"{DOCS}/rules/{name}/"


def code_url(code: str):
    """The documentation page for a code (its hazard forms share the rule's page); None for a
    code that is no rule's."""
    info = table().get(code)
    return rule_url(info.rule.NAME) if info else None


def visit_methods(rule: Type[Rule]) -> Dict[type, str]:
    """``ast`` node type -> the name of the rule's method that visits it."""
    out = {}
    for cls in rule.__mro__:
        if cls is Rule:
            break
        for name in vars(cls):
            if name.startswith("visit_") and name not in out.values():
                out.setdefault(getattr(ast, name[len("visit_"):]), name)
    return out


@functools.lru_cache(maxsize=None)
def node_types() -> tuple:
    """Every node type some rule visits: what the walk files by type."""
    seen: List[type] = []
    for rule in rules():
        seen.extend(t for t in visit_methods(rule) if t not in seen)
    return tuple(seen)


@functools.lru_cache(maxsize=None)
def _text_screen() -> "re.Pattern[bytes]":
    alternatives: List[bytes] = []
    for rule in rules():
        alternatives.extend(t for t in rule.TRIGGERS if t not in alternatives)
    return re.compile(b"|".join(b"(?:" + t + b")" for t in alternatives) or b"(?!)")


def may_have_candidates(data: bytes) -> bool:
    """A text screen, run before parsing: False only when no rule could report anything
    (none of their triggers occurs; strings and comments match too). Identifiers outside
    ASCII are beyond the patterns, so such files always go on."""
    return not data.isascii() or _text_screen().search(data) is not None


def could_apply(rule_classes, candidates: Dict[type, list]) -> bool:
    """Could any of ``rule_classes`` report anything, given the nodes the walk filed?"""
    for rule in rule_classes:
        for node_type in visit_methods(rule):
            if any(rule.could_start(n) for n in candidates.get(node_type, ())):
                return True
    return False


def dispatch_table(instances) -> Dict[type, List[Callable]]:
    """Node type -> the bound ``visit_`` methods of the rule instances, in rule order."""
    out: Dict[type, List[Callable]] = {}
    for rule in instances:
        for node_type, name in visit_methods(type(rule)).items():
            out.setdefault(node_type, []).append(getattr(rule, name))
    return out
