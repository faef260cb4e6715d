"""Fixes made on the file's real text where libcst does not give it back.

libcst rebuilds a statement's indentation from its block: a form feed in the leading whitespace
of a statement line (``\\fdef f():``, ``\\f    h += 1``: legal, CPython's tokenizer starts the
column count again after it) is dropped from the code it prints, and its positions count
columns without it, so a fix planned on CPython's columns found no node ("[*]" shown, nothing
fixed) and a fix elsewhere in the file deleted the form feed. Here such a prefix (the leading
whitespace up to its last form feed, "junk" to the indentation) is taken off before libcst
parses, and put back on the lines of the fixed text that stand for those lines.

Only lines that start outside a string and outside a backslash continuation are touched (taking
a form feed out of a string would change the string), and the text given back must be the same
program as libcst's (its ``ast``): where it is not, libcst's text is used as it is.
"""

from __future__ import annotations

import ast
import difflib
import re
import warnings
from typing import Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Set

Junk = Dict[int, str]  # line (1-based) -> the prefix taken off it

_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_TEXT_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_FORM_FEED_LEAD = re.compile(rb"[ \t\f]*\f")  # leading whitespace, up to its last form feed


def _parsed(source: "str | bytes") -> "ast.Module | None":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None


def _string_lines(tree: ast.Module, children: Optional[Mapping[ast.AST, List[ast.AST]]] = None,
                  walked: Optional[Callable[[type], List[ast.AST]]] = None) -> Set[int]:
    """Lines that start inside a string literal (the second and later lines of one).
    ``children``: every node's child nodes (the analysis' ``Source.children``), to walk the
    tree without ``ast.walk``; ``walked``: the tree's nodes of a type (``Source.walked``, which
    lists its constants and f-strings), to walk nothing."""
    inside: Set[int] = set()
    JoinedStr, Constant = ast.JoinedStr, ast.Constant
    if walked is not None:
        nodes: Iterable[ast.AST] = [*walked(Constant), *walked(JoinedStr)]
    else:
        nodes = ast.walk(tree) if children is None else _walk(tree, children)
    for node in nodes:
        cls = node.__class__
        if cls is JoinedStr or (cls is Constant and isinstance(node.value, (str, bytes))):  # type: ignore[attr-defined]
            end = node.end_lineno or node.lineno  # type: ignore[attr-defined]
            if end > node.lineno:  # type: ignore[attr-defined]
                inside.update(range(node.lineno + 1, end + 1))  # type: ignore[attr-defined]
    return inside


def _walk(tree: ast.AST, children: Mapping[ast.AST, List[ast.AST]]) -> Iterator[ast.AST]:
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        todo.extend(children[node])


def take_off(data: bytes) -> "tuple[bytes, Junk]":
    """``data`` without the form-feed prefixes of its statement lines, and what was taken off
    each line; ``(data, {})`` for nearly every file (no form feed at the start of a line)."""
    if b"\f" not in data:
        return data, {}
    lines: List[bytes] = _LINE.findall(data)
    candidates = {}
    for number, line in enumerate(lines, 1):
        match = _FORM_FEED_LEAD.match(line)
        if match is None:
            continue
        rest = line[match.end():].lstrip(b" \t")
        if rest[:1] in (b"", b"#", b"\r", b"\n"):
            continue  # blank and comment lines: libcst keeps them as they are
        if number > 1 and lines[number - 2].rstrip(b"\r\n").endswith(b"\\"):
            continue  # a continuation line: kept too
        candidates[number] = match.group()
    if not candidates:
        return data, {}
    tree = _parsed(data)
    if tree is None:
        return data, {}
    inside = _string_lines(tree)
    junk = {n: prefix.decode("ascii") for n, prefix in candidates.items() if n not in inside}
    if not junk:
        return data, {}
    cut = b"".join(line[len(junk[n]):] if n in junk else line for n, line in enumerate(lines, 1))
    return cut, junk


def put_back(junk: Junk, normalized: str, fixed: str) -> str:
    """``fixed`` (libcst's text of a fix of ``normalized``) with the prefixes of ``junk`` back
    on the lines that stand for the lines they were taken off: unchanged lines, lines of a
    changed run whose text (indentation aside) is the same, lines rewritten one for one, else
    the first line that replaces them."""
    if not junk:
        return fixed
    before: List[str] = _TEXT_LINE.findall(normalized)
    if fixed == normalized:  # the real text itself
        return "".join(junk.get(n, "") + line for n, line in enumerate(before, 1))
    after: List[str] = _TEXT_LINE.findall(fixed)
    out: List[str] = []
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.extend(junk.get(i1 + k + 1, "") + before[i1 + k] for k in range(i2 - i1))
            continue
        new = list(after[j1:j2])
        if new and any(n + 1 in junk for n in range(i1, i2)):
            inner = difflib.SequenceMatcher(None, [line.strip() for line in before[i1:i2]],
                                            [line.strip() for line in new], autojunk=False)
            for t, a1, a2, b1, b2 in inner.get_opcodes():
                if t == "equal":
                    for k in range(a2 - a1):
                        new[b1 + k] = junk.get(i1 + a1 + k + 1, "") + new[b1 + k]
                elif b1 < b2 and a1 < a2:  # line for line where as many, else onto the first
                    for k in range(a2 - a1 if a2 - a1 == b2 - b1 else 1):
                        new[b1 + k] = junk.get(i1 + a1 + k + 1, "") + new[b1 + k]
        out.extend(new)
    restored = "".join(out)
    first, second = _parsed(restored), _parsed(fixed)
    if first is None or second is None or ast.dump(first) != ast.dump(second):
        return fixed  # not the same program: libcst's text, without the form feeds
    return restored


def shift(junk: Junk, line: int, column: int) -> int:
    """A column of the real text on ``line``, in the text libcst parsed."""
    taken = len(junk.get(line, ""))
    return column - taken if column >= taken else column
