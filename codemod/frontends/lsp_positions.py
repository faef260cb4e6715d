"""Positions between our spans and the editor's, for the language server.

Our spans count lines from 1 and columns in characters (code points); LSP counts lines from 0
and columns in code units of the encoding negotiated at ``initialize`` (utf-16 unless the
client offers utf-8 or utf-32). An emoji is 1 character, 2 utf-16 units, 4 utf-8 bytes: a
position sent unconverted after one lands inside the wrong text (``h += 1`` fixed into
``h = h + 11``). pygls's position codec does the counting; this module only feeds it the
document's lines, split as LSP splits them.

LSP lines end at ``\\n``, ``\\r\\n`` or ``\\r`` only (as for ``ast``, whose lines our spans
count). ``str.splitlines``, which pygls's documents use, also splits at ``\\f``, ``\\v``,
``\\x1c``-``\\x1e``, ``\\x85``, ``\\u2028`` and ``\\u2029``: after a form feed every line
number would be one off, so :class:`LspTextDocument` splits the LSP way.
"""

from __future__ import annotations

import bisect
import re
from typing import List

from lsprotocol import types as lsp
from pygls.workspace import TextDocument, Workspace
from pygls.workspace.position_codec import PositionCodec, ServerTextPosition

from codemod.findings import Edit, Span

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str) -> List[str]:
    """The lines of ``text`` with their endings, split where LSP (and ``ast``) end a line."""
    return _LINE.findall(text)


class LspTextDocument(TextDocument):
    """A pygls document whose lines (used to apply incremental changes) are LSP's lines."""

    @property
    def lines(self):
        return tuple(split_lines(self.source))


class LspWorkspace(Workspace):
    """A pygls workspace that makes :class:`LspTextDocument` documents."""

    def _create_text_document(self, doc_uri, source=None, version=None, language_id=None):
        return LspTextDocument(doc_uri, source=source, version=version, language_id=language_id,
                               sync_kind=self._sync_kind, position_codec=self.position_codec)


def use_lsp_lines(workspace: Workspace) -> None:
    """Make ``workspace`` (pygls builds it in its own ``initialize``, before any document is
    opened) create :class:`LspTextDocument` documents."""
    if type(workspace) is Workspace:
        workspace.__class__ = LspWorkspace


class Positions:
    """One snapshot of a document's text, for converting positions both ways."""

    def __init__(self, text: str, codec: PositionCodec) -> None:
        self.text = text
        self.lines = split_lines(text)
        self.codec = codec
        self._starts = [0]
        for line in self.lines:
            self._starts.append(self._starts[-1] + len(line))

    def position(self, line: int, column: int) -> lsp.Position:
        """Our 1-based ``line`` and character ``column``, in the client's units (clamped to
        the document: an error may point past its end)."""
        index = max(line, 1) - 1
        if index >= len(self.lines):
            return self.end()
        content = self.lines[index].rstrip("\r\n")
        server = ServerTextPosition(index, max(0, min(column, len(content))))
        return self.codec.position_to_client_units(self.lines, server)

    def text_edit(self, edit: Edit) -> lsp.TextEdit:
        """An edit of ours as the client's edit. Fix edits count columns from the start of
        their line up to their end offset (they may reach past a ``\\r`` that ends a line, and in
        a file with ``\\r``-only endings across those lines): they are placed by offset, and one
        that would end between ``\\r`` and ``\\n`` (where LSP has no position) leaves that ``\\r``
        as it is and drops it from the new text."""
        start = self._offset(edit.span.line, edit.span.column)
        end = self._offset(edit.span.end_line, edit.span.end_column)
        content = edit.content
        if 0 < end < len(self.text) and self.text[end - 1:end + 1] == "\r\n" and content.endswith("\r"):
            end, content = end - 1, content[:-1]
        return lsp.TextEdit(lsp.Range(self._at(start), self._at(end)), content)

    def _offset(self, line: int, column: int) -> int:
        index = min(max(line, 1) - 1, len(self.lines))
        return min(self._starts[index] + column, len(self.text))

    def _at(self, offset: int) -> lsp.Position:
        index = bisect.bisect_right(self._starts, offset) - 1
        if index >= len(self.lines):
            return self.end()
        return self.position(index + 1, offset - self._starts[index])

    def range(self, span: Span) -> lsp.Range:
        return lsp.Range(self.position(span.line, span.column), self.position(span.end_line, span.end_column))

    def line_end(self, line: int) -> lsp.Position:
        """The end of ``line`` (1-based), before its line break."""
        return self.position(line, len(self.text))

    def end(self) -> lsp.Position:
        """The end of the document."""
        if not self.lines or self.lines[-1].endswith(("\n", "\r")):
            return lsp.Position(len(self.lines), 0)
        last = self.lines[-1]
        return lsp.Position(len(self.lines) - 1, self.codec.client_num_units(last))

    def lines_of(self, rng: lsp.Range) -> range:
        """The lines (1-based) a client's range touches; a range that ends at the start of a
        line does not take that line."""
        start = self.codec.position_from_client_units(self.lines, lsp.Position(rng.start.line, rng.start.character))
        end = self.codec.position_from_client_units(self.lines, lsp.Position(rng.end.line, rng.end.character))
        last = end.line - 1 if end.character == 0 and end.line > start.line else end.line
        return range(start.line + 1, last + 2)
