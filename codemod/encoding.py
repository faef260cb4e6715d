"""Which encoding a Python source file declares, by the rules CPython applies (PEP 263).

A BOM means UTF-8; otherwise a ``coding`` cookie on the first or second line; otherwise UTF-8.
The first line can be of any length: the cookie is looked for by lines, not by a byte window,
and (as CPython does, unlike ``tokenize``) a lone CR ends a line too.
"""

from __future__ import annotations

import itertools
import re
import tokenize

BOM = b"\xef\xbb\xbf"


_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)?")


def _first_two_lines(data: bytes) -> list:
    """As CPython's tokenizer splits them: a line ends at LF, CRLF or a lone CR."""
    return [m.group() for m in itertools.islice(_LINE.finditer(data), 2)]


def source_encoding(data: bytes) -> str:
    """The codec to decode ``data`` with: ``utf-8-sig`` for UTF-8 (a BOM is dropped), else the
    declared one. Raises SyntaxError for a cookie CPython rejects (unknown, or not matching a BOM)."""
    if data.startswith(BOM):
        return "utf-8-sig"
    lines = _first_two_lines(data)
    if not any(b"coding" in line for line in lines):
        return "utf-8-sig"
    encoding, _ = tokenize.detect_encoding(iter(lines + [b""]).__next__)
    return "utf-8-sig" if encoding in ("utf-8", "utf-8-sig") else encoding


def decode_source(data: bytes) -> str:
    """The text of a source file, line endings kept as they are (no universal newlines)."""
    return data.decode(source_encoding(data))


def encode_source(text: str, like: bytes) -> bytes:
    """``text`` as bytes in the encoding (and with the BOM) of the file ``like`` was read from."""
    encoding = source_encoding(like)
    if encoding == "utf-8-sig":
        return (BOM if like.startswith(BOM) else b"") + text.encode("utf-8")
    return text.encode(encoding)


def encode_text(text: str) -> bytes:
    """``text`` as bytes in the encoding its own coding cookie names (UTF-8 without one, or
    with one CPython rejects): for a text whose file's bytes are not at hand."""
    try:
        return encode_source(text, like=text.encode("utf-8", "surrogatepass"))
    except (SyntaxError, LookupError, UnicodeEncodeError):
        return text.encode("utf-8", "surrogatepass")
