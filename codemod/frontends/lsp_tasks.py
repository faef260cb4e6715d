"""Keeping the language server responsive: diagnostics at once, coalesced under load, and work
off the event loop.

pygls runs every handler on one asyncio loop, so an analysis there holds up every other
message. A change is analysed at once when no analysis of that document is running (as ruff's
server and rust-analyzer do: no fixed wait on a single edit); changes that arrive while one runs
are coalesced into one analysis after it, of the newest text (a burst of 100 changes is analysed
a few times, not 100 times), and the running one's result, superseded, is not published
(``Coalescer``). ``debounceMs`` (default 0) can still add a quiet time before each analysis.
The analyses run in a worker thread. Requests run in worker threads too; cancelling one
(``$/cancelRequest``) answers the client at once and drops work that has not started yet (a
thread that has started cannot be interrupted: its result is dropped; the fix-all, which can
take seconds, runs in a process that can be killed: ``lsp_fixall``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
from typing import Awaitable, Callable, Dict, Set, Tuple, TypeVar

T = TypeVar("T")

DEBOUNCE_MS = 0  # the default quiet time before a changed document is analysed: none
Job = Callable[[], Awaitable[None]]


class Coalescer:
    """Per key (a document): at most one job running, and at most one waiting for it.

    A job scheduled while none of its key runs starts at once (after ``delay_s``, the editor's
    quiet time, restarted by each schedule until it has passed). One scheduled while a job of
    its key runs waits until that one ends and replaces the one already waiting: the changes
    that arrive during an analysis make one analysis after it, and that job reads the newest
    text when it starts. A running job is not cancelled (a worker thread cannot be
    interrupted); it asks :meth:`superseded` before it publishes."""

    def __init__(self) -> None:
        self._tasks: Dict[str, asyncio.Task] = {}  # key -> its task (in its quiet time, or running)
        self._running: Set[str] = set()
        self._waiting: Dict[str, Tuple[float, Job]] = {}  # key -> the job to start when it ends

    def schedule(self, key: str, delay_s: float, job: Job) -> None:
        if key in self._running:
            self._waiting[key] = (delay_s, job)
            return
        self._waiting.pop(key, None)  # (one left by a job that has just ended: this one is newer)
        old = self._tasks.pop(key, None)
        if old is not None:  # still in its quiet time: it starts again
            old.cancel()
        self._start(key, delay_s, job)

    def running(self, key: str) -> bool:
        return key in self._running

    def superseded(self, key: str) -> bool:
        """Whether a newer job of ``key`` waits: what the running one made is out of date."""
        return key in self._waiting

    def _start(self, key: str, delay_s: float, job: Job) -> None:
        task = asyncio.ensure_future(self._run(key, delay_s, job))
        self._tasks[key] = task
        task.add_done_callback(functools.partial(self._done, key))

    async def _run(self, key: str, delay_s: float, job: Job) -> None:
        if delay_s > 0:
            await asyncio.sleep(delay_s)
        self._running.add(key)
        try:
            await job()
        finally:
            self._running.discard(key)

    def _done(self, key: str, task: asyncio.Task) -> None:
        if self._tasks.get(key) is task:
            del self._tasks[key]
            waiting = self._waiting.pop(key, None)
            if waiting is not None:
                self._start(key, *waiting)
        if not task.cancelled() and task.exception() is not None:
            logging.getLogger(__name__).error("%s failed", key, exc_info=task.exception())

    def cancel(self, key: str) -> None:
        self._waiting.pop(key, None)
        task = self._tasks.pop(key, None)
        if task is not None:
            task.cancel()

    def cancel_all(self) -> None:
        self._waiting.clear()
        for task in self._tasks.values():
            task.cancel()
        self._tasks.clear()


class Workers:
    """A small pool of threads for analyses and fixes, awaited from the event loop."""

    def __init__(self, threads: int = 4) -> None:
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=threads, thread_name_prefix="inplacefix")

    def submit(self, fn: Callable[..., T], *args) -> "concurrent.futures.Future[T]":
        return self._pool.submit(fn, *args)

    async def run(self, fn: Callable[..., T], *args) -> T:
        """``fn(*args)`` in a worker thread; cancelling the await drops it if not started."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, functools.partial(fn, *args))

    def stop(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
