"""Reading and writing source files without losing anything.

Files are read and written as bytes: libcst keeps the encoding (PEP 263 cookie, BOM) and the
line endings. A write goes to a temporary file in the target's folder that then replaces the
target atomically, with its permission bits, owner and group. What a write never does:

- overwrite an edit made since the file was read (:class:`FileChanged`);
- rewrite a read-only file (:class:`ReadOnlyFile`): the user (or a build) marked it so;
- replace a symbolic link: the write goes to the file it resolves to, the link stays;
- split hard links: a file with several names is rewritten in place, so every name sees
  the fix (the one write that is not atomic: a crash in the middle can leave it half-written);
  the same holds for a file whose owner cannot be kept (not root, someone else's file);
- start once a stop was requested (:func:`request_stop`, :class:`Interrupted`): a run
  interrupted by a signal writes nothing after the signal is handled, in any process that
  shares the stop (:func:`share_stop`). The step that changes the file (the replace, or the
  rewrite in place) runs with SIGINT and SIGTERM held back, so no handler runs in the middle
  of it: the file is the old one or the new one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import os
import pathlib
import re
import signal
import stat
import tempfile
import time
from typing import Optional

TEMP_SUFFIX = ".inplacefix"
# mkstemp's names: the prefix we give, 8 random characters, the suffix.
_TEMP_NAME = re.compile(r"\..+\.[a-z0-9_]{8}" + re.escape(TEMP_SUFFIX))
# A write takes milliseconds: a temporary file this old was left by a run that was killed.
STALE_AFTER_S = 600
_BINARY = getattr(os, "O_BINARY", 0)  # Windows: no newline translation on raw file descriptors


class WriteRefused(Exception):
    """A file left as it is on purpose; the message says why, for the user."""


class FileChanged(WriteRefused):
    pass


class ReadOnlyFile(WriteRefused):
    pass


class Interrupted(WriteRefused):
    pass


# ---------------------------------------------------------------- stopping writes
# signal: the signal that asked this process to stop; flag, lock: shared with the other
# processes of the run (a byte of shared memory set to 1 once any asks, a Lock held while a
# file is being changed); holding: this process is changing a file now. The flag has no lock
# of its own (a signal handler sets it, and could interrupt a reader holding one).
_stop: dict = {"signal": None, "flag": None, "lock": None, "holding": False, "committed": False}
_HELD = {getattr(signal, name) for name in ("SIGINT", "SIGTERM") if hasattr(signal, name)}
_LOCK_WAIT_S = 10.0  # a file is changed in milliseconds; a holder that died must not hang the rest


def share_stop(flag, lock) -> None:
    """Share the stop with the other processes of a run: ``flag`` is a
    ``multiprocessing.RawValue("b", 0)``, ``lock`` a ``multiprocessing.Lock``, the same
    objects in every process."""
    _stop["flag"], _stop["lock"] = flag, lock


def clear_stop() -> None:
    """Forget any stop (a new run starts): writes are allowed again."""
    _stop.update(signal=None, flag=None, lock=None, holding=False, committed=False)


def request_stop(signum: int) -> None:
    """No write starts, in this process or one sharing the stop, once this returns; a write
    being committed in another process at this moment finishes first (it holds the lock).
    Safe in a signal handler: it waits for the lock only when this process does not hold it."""
    _stop["signal"] = _stop["signal"] or signum
    flag, lock = _stop["flag"], _stop["lock"]
    if flag is None:
        return
    fenced = lock is not None and not _stop["holding"] and lock.acquire(timeout=_LOCK_WAIT_S)
    try:
        flag.value = 1
    finally:
        if fenced:
            lock.release()


def stop_requested() -> bool:
    if _stop["signal"] is not None:
        return True
    flag = _stop["flag"]
    return flag is not None and bool(flag.value)


def writing() -> bool:
    """This process is changing a file now (inside the step signals are held back for)."""
    return _stop["holding"]


def wrote_since(mark: bool = False) -> bool:
    """Whether this process changed a file since the last ``wrote_since(mark=True)`` (which
    starts a new count): work that wrote must be reported, never abandoned."""
    committed = _stop["committed"]
    if mark:
        _stop["committed"] = False
    return committed


def stop_signal():
    """The signal that asked this process to stop (None: none did, or another process did)."""
    return _stop["signal"]


@contextlib.contextmanager
def held_signals():
    """SIGINT and SIGTERM held back in this thread (and in the threads and processes it starts
    meanwhile, which inherit the mask); delivered when the block ends. POSIX only."""
    if not _HELD or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


@contextlib.contextmanager
def _committing():
    """Around the step that changes a file: signals held back, the shared lock held, and no
    stop requested (else :class:`Interrupted`, and the file is left as it is)."""
    with held_signals():
        lock = _stop["lock"]
        locked = lock is not None and lock.acquire(timeout=_LOCK_WAIT_S)
        _stop["holding"] = True
        try:
            if stop_requested():
                raise Interrupted("interrupted: not written")
            _stop["committed"] = True  # from here the file may be changed
            yield
        finally:
            _stop["holding"] = False
            if locked:
                lock.release()


@dataclasses.dataclass(frozen=True)
class Snapshot:
    """A file's bytes as read, and what identifies that version on disk."""

    data: bytes
    version: tuple  # (device, inode, size, mtime_ns)


def _version(st: os.stat_result) -> tuple:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def read_snapshot(path: pathlib.Path) -> Snapshot:
    """Read a regular file (following links). A FIFO, device or folder raises OSError
    instead of blocking or reading something that is not a source file."""
    fd = os.open(path, os.O_RDONLY | _BINARY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError("is a folder" if stat.S_ISDIR(st.st_mode) else "is not a regular file")
        return Snapshot(handle.read(), _version(st))


def read_source(path: pathlib.Path) -> bytes:
    return read_snapshot(path).data


def is_read_only(st: os.stat_result, path: pathlib.Path) -> bool:
    """No write bit at all (root could write it anyway, but was told not to), or not ours to write."""
    return st.st_mode & 0o222 == 0 or not os.access(path, os.W_OK)


CHANGED = "changed on disk since it was read: left as it is (run again)"


def check_unchanged(path: pathlib.Path, snapshot: Snapshot) -> None:
    """Raise :class:`FileChanged` if ``path`` (through links) is no longer what ``snapshot``
    read: other bytes, or another version on disk (a save that restored the same bytes counts)."""
    target = pathlib.Path(os.path.realpath(path))
    try:
        st = os.stat(target)
        same = _version(st) == snapshot.version and read_source(target) == snapshot.data
    except OSError:
        same = False
    if not same:
        raise FileChanged(CHANGED)


def write_atomic(path: pathlib.Path, data: bytes, snapshot: Optional[Snapshot] = None) -> None:
    """Replace the contents of ``path`` (through links) with ``data``.

    With ``snapshot`` (what was read), refuse when the file changed since. Raises
    :class:`WriteRefused` (the file is left alone) or OSError."""
    if stop_requested():
        raise Interrupted("interrupted: not written")
    target = pathlib.Path(os.path.realpath(path))
    st = os.stat(target)
    if snapshot is not None:
        check_unchanged(target, snapshot)
    if is_read_only(st, target):
        raise ReadOnlyFile("read-only file: not rewritten (make it writable to fix it)")
    if st.st_nlink > 1:
        with _committing():
            _write_in_place(target, data)
        return
    # The name is cut so that the temporary file's fits where the file's did (NAME_MAX).
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name[:200]}.", suffix=TEMP_SUFFIX, dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, stat.S_IMODE(st.st_mode))
        if not _keep_owner(tmp, st):
            os.unlink(tmp)
            with _committing():
                _write_in_place(target, data)
            return
        with _committing():
            if snapshot is not None and _version(os.stat(target)) != snapshot.version:
                raise FileChanged(CHANGED)
            os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _keep_owner(tmp: str, st: os.stat_result) -> bool:
    """Give ``tmp`` the owner and group of the file it replaces; False if not permitted."""
    mine = os.stat(tmp)
    if (mine.st_uid, mine.st_gid) == (st.st_uid, st.st_gid) or not hasattr(os, "chown"):
        return True
    try:
        os.chown(tmp, st.st_uid, st.st_gid)
    except PermissionError:
        return False
    return True


def _write_in_place(target: pathlib.Path, data: bytes) -> None:
    """Overwrite the file's own inode: its links, owner, group and mode stay as they are.

    The space is reserved first (a full disk fails before a byte changes); a write that fails
    anyway puts the old bytes back (they fit: the file held them)."""
    fd = os.open(target, os.O_RDWR | _BINARY)
    try:
        old = os.read(fd, os.fstat(fd).st_size + 1)  # what is on disk now, to put back on failure
        if len(data) > len(old) and hasattr(os, "posix_fallocate"):
            try:
                os.posix_fallocate(fd, 0, len(data))
            except OSError as exc:
                if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                    os.ftruncate(fd, len(old))
                    raise
        try:
            _overwrite(fd, data)
        except OSError:
            try:
                _overwrite(fd, old)
            except OSError:
                pass
            raise
    finally:
        os.close(fd)


def _overwrite(fd: int, data: bytes) -> None:
    view, offset = memoryview(data), 0
    os.lseek(fd, 0, os.SEEK_SET)
    while offset < len(data):
        offset += os.write(fd, view[offset:])
    os.ftruncate(fd, len(data))
    os.fsync(fd)


def is_stale_temp(path: pathlib.Path, now: Optional[float] = None) -> bool:
    """A temporary file of ours (by its name) that a killed write left behind."""
    if not _TEMP_NAME.fullmatch(path.name):
        return False
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and (now or time.time()) - st.st_mtime > STALE_AFTER_S
