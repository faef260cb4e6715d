"""Keeping the language server responsive: debounced work and work off the event loop.

pygls runs every handler on one asyncio loop, so an analysis there holds up every other
message, and each ``didChange`` of a burst would be analysed in turn (100 changes took 1.1 s to
settle). Here a change only (re)starts a short timer per document; the analysis runs when the
document has been quiet that long, in a worker thread, and its result is dropped when the
document changed meanwhile. Requests run in worker threads too; cancelling one
(``$/cancelRequest``) answers the client at once and drops work that has not started yet (a
thread that has started cannot be interrupted: its result is dropped; the fix-all, which can
take seconds, runs in a process that can be killed: ``lsp_fixall``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
from typing import Awaitable, Callable, Dict, TypeVar

T = TypeVar("T")

DEBOUNCE_MS = 50  # the default quiet time before a changed document is analysed


class Debouncer:
    """At most one pending job per key: scheduling a key again cancels the one before."""

    def __init__(self) -> None:
        self._pending: Dict[str, asyncio.Task] = {}

    def schedule(self, key: str, delay_s: float, job: Callable[[], Awaitable[None]]) -> None:
        old = self._pending.pop(key, None)
        if old is not None:
            old.cancel()
        task = asyncio.ensure_future(self._after(delay_s, job))
        self._pending[key] = task
        task.add_done_callback(functools.partial(self._done, key))

    @staticmethod
    async def _after(delay_s: float, job: Callable[[], Awaitable[None]]) -> None:
        if delay_s > 0:
            await asyncio.sleep(delay_s)
        await job()

    def _done(self, key: str, task: asyncio.Task) -> None:
        if self._pending.get(key) is task:
            del self._pending[key]
        if not task.cancelled() and task.exception() is not None:
            logging.getLogger(__name__).error("%s failed", key, exc_info=task.exception())

    def cancel(self, key: str) -> None:
        task = self._pending.pop(key, None)
        if task is not None:
            task.cancel()

    def cancel_all(self) -> None:
        for task in self._pending.values():
            task.cancel()
        self._pending.clear()


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
