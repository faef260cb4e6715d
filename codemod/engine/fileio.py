"""Reading and writing source files without losing anything.

Files are read and written as bytes: libcst keeps the encoding (PEP 263 cookie, BOM) and the
line endings, and a write goes to a temporary file in the same folder that replaces the
original atomically, with the original's permission bits.
"""

from __future__ import annotations

import os
import pathlib
import tempfile


def read_source(path: pathlib.Path) -> bytes:
    return path.read_bytes()


def write_atomic(path: pathlib.Path, data: bytes) -> None:
    mode = path.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".inplacefix", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
