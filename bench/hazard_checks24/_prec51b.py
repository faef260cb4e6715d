"""Shared by the stop 51 (prec51b) drivers: where the unpacked sources are, and compiling a few top-level
functions or classes of a shipped file alone (when the package's imports cannot be met), optionally with one
statement replaced by its out-of-place form (the control)."""

import ast
import os
import sys

PK = os.environ.get("PREC51B_SITE", "/work/tmp/prec51b/pk")
PK2 = os.environ.get("PREC51B_SITE2", "/work/tmp/prec51b/pk2")
DEPS = os.environ.get("PREC50B_DEPS", "/work/tmp/prec50b/deps")
sys.path[:0] = [PK, PK2, DEPS]


def _replace(tree, line, code):
    """Replace the statement that starts at `line` (anywhere in `tree`) by `code`."""
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


def compile_alone(path, names, ns, replace=None, undecorate=False):
    """Exec the top-level defs `names` of `path` (as shipped, or with {line: code} replaced) into ns;
    undecorate drops their decorators (torch.jit.script compiles from the file's text, not from the tree)."""
    tree = ast.parse(open(path).read(), path)
    if undecorate:
        for node in tree.body:
            if getattr(node, "name", None) in names and hasattr(node, "decorator_list"):
                node.decorator_list = []
    for line, code in (replace or {}).items():
        _replace(tree, line, code)
    body = [n for n in tree.body if getattr(n, "name", None) in names]
    exec(compile(ast.Module(body=body, type_ignores=[]), path, "exec"), ns)
    return ns
