"""Store calls on one worker thread, in order: the event loop never waits on SQLite."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")
log = logging.getLogger(__name__)


class StoreWorker:
    """``await worker.call(fn, ...)`` runs ``fn`` on the store's thread; ``worker.submit``
    queues a write without waiting for it (streamed text), still in order with the rest."""

    def __init__(self) -> None:
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="terax-ai-store")

    async def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, *args, **kwargs))

    def submit(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        self._executor.submit(fn, *args, **kwargs).add_done_callback(_log_failure)

    def close(self) -> None:
        self._executor.shutdown(wait=True)


def _log_failure(future: Future[Any]) -> None:
    error = future.exception()
    if error is not None:
        log.error("A queued AI store write failed: %s", type(error).__name__)
