"""Shared by the stop 51 (prec51b) drivers: where the unpacked sources are, and compiling a few top-level
functions or classes of a shipped file alone (when the package's imports cannot be met), optionally with one
statement replaced by its out-of-place form (the control)."""

import ast
import os
import sys

from _rewrite import replace_statement

PK = os.environ.get("PREC51B_SITE", "/work/tmp/prec51b/pk")
PK2 = os.environ.get("PREC51B_SITE2", "/work/tmp/prec51b/pk2")
DEPS = os.environ.get("PREC50B_DEPS", "/work/tmp/prec50b/deps")
sys.path[:0] = [PK, PK2, DEPS]


def compile_alone(path, names, ns, replace=None, undecorate=False):
    """Exec the top-level defs `names` of `path` (as shipped, or with {line: code} replaced) into ns;
    undecorate drops their decorators (torch.jit.script compiles from the file's text, not from the tree)."""
    tree = ast.parse(open(path).read(), path)
    if undecorate:
        for node in tree.body:
            if getattr(node, "name", None) in names and hasattr(node, "decorator_list"):
                node.decorator_list = []
    for line, code in (replace or {}).items():
        replace_statement(tree, line, code)
    body = [n for n in tree.body if getattr(n, "name", None) in names]
    exec(compile(ast.Module(body=body, type_ignores=[]), path, "exec"), ns)
    return ns
