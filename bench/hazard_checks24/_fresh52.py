"""Shared by the stop 52 (fresh52) drivers: where the unpacked sources are (`pip download --no-deps`, wheels
unzipped without their dist-info, the package folder of an sdist copied; nothing installed), and compiling
top-level defs or one method of a shipped file alone (ast, line numbers kept), with statements replaced by
line (the out-of-place control, or `return locals()` to stop after a line)."""

import ast
import os

from _rewrite import replace_statement

ROOT = os.environ.get("FRESH52_SITE", "/work/tmp/s52/fresh52-pk")
SITES = [os.path.join(ROOT, d) for d in ("site", "b2/site", "b3/site", "b4/site", "b5/site", "b6/site")]


def src(relpath):
    """The shipped file `relpath` (as labels.tsv names it) in whichever batch holds it."""
    for site in SITES:
        path = os.path.join(site, relpath)
        if os.path.exists(path):
            return path
    raise SystemExit(f"{relpath} not found under {ROOT}")


def compile_alone(path, names, ns, replace=None, bases=None):
    """Exec the top-level defs `names` of `path` (as shipped, or with {line: code} replaced) into ns; a
    name `Class.method` brings that method alone, as a plain function under its own name.
    `bases` ({class name: [base expressions]}) swaps a class's bases for stand-ins."""
    tree = ast.parse(open(path).read(), path)
    for line, code in (replace or {}).items():
        replace_statement(tree, line, code)
    body = [n for n in tree.body if getattr(n, "name", None) in names]
    for node in tree.body:  # "Class.method": that method as a plain function (call it with a stand-in self)
        if isinstance(node, ast.ClassDef):
            body += [item for item in node.body
                     if isinstance(item, ast.FunctionDef) and f"{node.name}.{item.name}" in names]
    if len(body) != len(set(names)):
        raise SystemExit(f"{path}: not all of {sorted(names)} found")
    for node in body:
        if isinstance(node, ast.ClassDef) and bases and node.name in bases:
            node.bases = [ast.parse(b, mode="eval").body for b in bases[node.name]]
            node.keywords = []
    future = ast.parse("from __future__ import annotations").body  # annotations stay unevaluated
    exec(compile(ast.Module(body=future + body, type_ignores=[]), path, "exec"), ns)
    return ns
