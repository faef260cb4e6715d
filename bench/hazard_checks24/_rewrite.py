"""Controls by rewriting one line of a library function: the same computation with the flagged write
made out of place (or the saved operand cloned), compiled from the installed source in the module's
own globals and put in place only for the scenario. A control that runs where the original raises
shows that the flagged write is what raised; a rewrite of a line *before* the flagged one isolates
the flagged write from an earlier one on the same path."""

from __future__ import annotations

import ast
import contextlib
import inspect
import textwrap
from typing import Any, Callable, Iterator, Sequence, Tuple


def rewritten(function: Callable[..., Any], edits: Sequence[Tuple[str, str]]) -> Callable[..., Any]:
    """``function`` compiled again with each ``(old, new)`` text replaced (each old must occur exactly
    once); line numbers kept, so ``expect_line`` and ``stop_after`` lines still apply. Not for
    closures or zero-argument ``super()`` (a fresh compile has no cells)."""
    raw = inspect.unwrap(getattr(function, "__func__", function))
    lines, first = inspect.getsourcelines(raw)
    source = textwrap.dedent("".join(lines))
    for old, new in edits:
        if old.count("\n") != new.count("\n"):
            raise SystemExit(f"{raw.__qualname__}: {new!r} must keep the line count of {old!r}")
        if source.count(old) != 1:
            raise SystemExit(f"{raw.__qualname__}: {old!r} occurs {source.count(old)} times, not once")
        source = source.replace(old, new)
    namespace: dict = {}
    exec(compile("\n" * (first - 1) + source, inspect.getsourcefile(raw) or "<rewritten>", "exec"),
         raw.__globals__, namespace)
    made = namespace[raw.__name__]
    return getattr(made, "__func__", made)


@contextlib.contextmanager
def replaced(owner: Any, name: str, function: Callable[..., Any]) -> Iterator[Callable[..., Any]]:
    """``owner.name`` (a class's method or a module's function) is ``function`` inside the block."""
    before = owner.__dict__[name]
    wrap = staticmethod if isinstance(before, staticmethod) else (
        classmethod if isinstance(before, classmethod) else (lambda f: f))
    setattr(owner, name, wrap(function))
    try:
        yield function
    finally:
        setattr(owner, name, before)


def functions_from(path: str, names: Sequence[str]) -> dict:
    """The top-level functions and constants ``names`` of the installed file ``path`` (``Class.method``:
    that method as a plain function, to call with a stand-in ``self``), with the file's plain
    ``import x`` / ``import x as y`` statements, run from that file's source (its name and line
    numbers kept): for a module whose package imports cannot be met here (binary wheels for another
    torch, spacy) while the functions checked need only torch, numpy and the standard library."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), path)
    wanted = set(names)
    kept: list = []
    found = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            kept.append(node)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in wanted:
            kept.append(node)
            found.add(node.name)
        elif isinstance(node, ast.Assign):
            targets = {t.id for t in node.targets if isinstance(t, ast.Name)} & wanted
            if targets:
                kept.append(node)
                found |= targets
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and f"{node.name}.{item.name}" in wanted:
                    kept.append(item)
                    found.add(f"{node.name}.{item.name}")
    if found != wanted:
        raise SystemExit(f"{path}: {sorted(wanted - found)} not found")
    namespace: dict = {"__name__": "functions_from", "__file__": path}
    exec(compile(ast.Module(body=kept, type_ignores=[]), path, "exec"), namespace)
    for name in wanted:
        if "." in name:
            namespace[name] = namespace[name.split(".")[1]]
    return namespace


def replace_statement(tree: ast.AST, line: int, code: str) -> None:
    """Replace the statement that starts at ``line`` (anywhere in ``tree``) by ``code``, line
    numbers kept (the drivers that compile a shipped function alone: ``_prec51b``, ``_fresh52``)."""
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for i, stmt in enumerate(block):
                if isinstance(stmt, ast.stmt) and stmt.lineno == line:
                    new = ast.parse(code).body
                    block[i:i + 1] = [ast.fix_missing_locations(ast.copy_location(s, stmt)) for s in new]
                    return
    raise SystemExit(f"no statement at line {line}")
