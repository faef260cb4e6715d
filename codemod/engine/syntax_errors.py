"""A file that does not parse, worded as CPython reports it.

CPython is the authority on what a Python file is, so the line, column and message are its own
(tokenizer errors included); libcst's message, which says what it expected, is added only as a
hint where CPython says no more than "invalid syntax". When the file parses under a newer
grammar (libcst's) and CPython's error falls on syntax that a newer Python added, the error says
which Python the file needs.

libcst's parser is asked only about files small and shallow enough: its cost grows steeply with
bracket nesting (measured on libcst 1.9: 200 nested mixed brackets 1.8 s and 266 MB; 1,000 nested
calls 11 s and 2.2 GB; 1,000 nested mixed brackets crashed the process).
"""

from __future__ import annotations

import ast
import re
import sys
import warnings
from typing import NamedTuple, Optional

# At most this bracket depth and this size for a libcst hint (measured: 50 nested mixed brackets
# 0.1 s and 40 MB; a 64 KiB module 0.5 s, 256 KiB 2.3 s, on a loaded 2-core machine).
MAX_HINT_DEPTH = 50
MAX_HINT_BYTES = 64 * 1024
_BRACKETS = b"([{)]}"
_NOT_BRACKETS = bytes(b for b in range(256) if b not in _BRACKETS)


class ParseFailure(NamedTuple):
    """What the pipeline reports (as its ``FileError``): the wording and CPython's location."""

    message: str
    line: int = 1  # 1-based
    column: int = 0  # 0-based, in characters (CPython's offset less one)


class Location(NamedTuple):
    line: int  # 1-based
    column: int  # 0-based, in characters (CPython's offset less one)


class NewerSyntax(NamedTuple):
    """Syntax a later Python added, recognised on the line CPython stopped at."""

    version: tuple
    name: str
    line: "re.Pattern[str]"  # matched against that line
    message: Optional[str] = None  # CPython's message must start with this, when given


NEWER = (
    NewerSyntax((3, 14), "a template string (PEP 750)", re.compile(r"(?<![\w'\"])(?:[tT][rR]?|[rR][tT])['\"]")),
    NewerSyntax((3, 14), "an unparenthesised `except` list (PEP 758)", re.compile(r"^\s*except\b(?!.*\bas\b)"),
                "multiple exception types must be parenthesized"),
    NewerSyntax((3, 13), "a type parameter default (PEP 696)",
                re.compile(r"^\s*(?:(?:async\s+)?def|class|type)\s+\w+\s*\[[^\]]*=")),
    NewerSyntax((3, 12), "a `type` statement (PEP 695)", re.compile(r"^\s*type\s+[A-Za-z_]\w*\s*[\[=]")),
    NewerSyntax((3, 12), "type parameters (PEP 695)", re.compile(r"^\s*(?:(?:async\s+)?def|class)\s+\w+\s*\[")),
    NewerSyntax((3, 12), "an f-string (PEP 701)", re.compile(r""), "f-string"),
)


def syntax_error(data: bytes, exc: BaseException) -> ParseFailure:
    """The failure for a file whose parse (or decoding) raised ``exc``, in CPython's terms."""
    cpython = exc if isinstance(exc, SyntaxError) else _cpython_error(data)
    if cpython is None:  # CPython parses it: our decoding failed, not the syntax
        return ParseFailure(f"cannot decode: {exc}")
    if isinstance(cpython, ParseFailure):
        return cpython
    if cpython.lineno is None and b"\0" in data:  # CPython gives null bytes no location
        return ParseFailure(f"cannot parse: {cpython.msg}", *_location_of(data, b"\0"))
    where = Location(max(cpython.lineno or 1, 1), max((cpython.offset or 1) - 1, 0))
    message = f"cannot parse: {cpython.msg}"
    if _libcst_may_answer(data):
        newer = _newer_syntax(data, cpython, where)
        if newer is not None:
            message += (f" (this needs Python {newer.version[0]}.{newer.version[1]} or later: {newer.name};"
                        f" inplacefix is running on Python {sys.version_info[0]}.{sys.version_info[1]})")
        elif cpython.msg == "invalid syntax":
            hint = _libcst_hint(data)
            if hint:
                message += f" (libcst: {hint})"
    return ParseFailure(message, where.line, where.column)


def _cpython_error(data: bytes):
    """CPython's SyntaxError for ``data``; a ParseFailure where it has none to give (nesting
    beyond its recursion limit); None if it parses."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(data, "<file>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
        except SyntaxError as exc:
            return exc
        except ValueError as exc:  # null bytes, in some versions
            return SyntaxError(str(exc))
        except (RecursionError, MemoryError):
            return ParseFailure("cannot parse: nested too deeply for Python's parser")
    return None


def _location_of(data: bytes, needle: bytes) -> Location:
    index = data.index(needle)
    start = data.rfind(b"\n", 0, index) + 1
    return Location(data.count(b"\n", 0, index) + 1, len(data[start:index].decode("utf-8", "replace")))


def _libcst_may_answer(data: bytes) -> bool:
    """Whether asking libcst's parser is cheap enough: bounded size and bracket depth."""
    if len(data) > MAX_HINT_BYTES:
        return False
    depth = deepest = 0
    for byte in data.translate(None, _NOT_BRACKETS):
        depth = depth + 1 if byte in b"([{" else max(depth - 1, 0)
        deepest = max(deepest, depth)
    return deepest <= MAX_HINT_DEPTH


def _libcst_error(data: bytes):
    """libcst's ParserSyntaxError, None if it parses, False if it failed otherwise."""
    import libcst as cst

    try:
        cst.parse_module(data)
    except cst.ParserSyntaxError as exc:
        return exc
    except Exception:  # noqa: BLE001 - only a hint is lost
        return False
    return None


def _newer_syntax(data: bytes, cpython: SyntaxError, where: Location) -> Optional[NewerSyntax]:
    line = _line(data, where.line)
    candidates = [
        s for s in NEWER
        if sys.version_info < s.version and s.line.search(line)
        and (s.message is None or cpython.msg.startswith(s.message))
    ]
    if not candidates or _libcst_error(data) is not None:  # only a file a newer grammar accepts
        return None
    return candidates[0]


def _line(data: bytes, number: int) -> str:
    lines = data.split(b"\n")
    return lines[number - 1].decode("utf-8", "replace") if number <= len(lines) else ""


def _libcst_hint(data: bytes) -> Optional[str]:
    """libcst's message, without its own location (CPython's is the one reported) and with a
    long list of alternatives shortened."""
    exc = _libcst_error(data)
    if not exc:
        return None
    text = re.sub(r"^(?:parser|tokenizer) error: (?:error at \d+:\d+: )?", "", exc.message)
    head, sep, alternatives = text.partition("expected one of ")
    options = alternatives.split(", ")
    if sep and len(options) > 8:
        text = f"{head}expected one of {', '.join(options[:8])} and {len(options) - 8} more"
    return text
