"""One event loop in a daemon thread, where the notebook client's network work runs.

A kernel's main thread already runs an event loop (ipykernel's), so a cell cannot call
``asyncio.run``; and blocking it on the kernel's own loop would deadlock. Every request and
WebSocket of ``terax_jupyter.notebook`` runs here instead, and sync callers wait on a
``concurrent.futures.Future`` (interruptible: a kernel interrupt raises KeyboardInterrupt in
the waiting thread, never in this one).
"""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import concurrent.futures
    from collections.abc import Coroutine

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None


def loop() -> asyncio.AbstractEventLoop:
    """The background loop, started on first use."""
    global _loop, _thread
    with _lock:
        if _loop is None or _thread is None or not _thread.is_alive():
            ready = threading.Event()
            new_loop = asyncio.new_event_loop()

            def main() -> None:
                asyncio.set_event_loop(new_loop)
                new_loop.call_soon(ready.set)
                new_loop.run_forever()

            _thread = threading.Thread(target=main, name="terax-notebook", daemon=True)
            _loop = new_loop
            _thread.start()
            ready.wait()
        return _loop


def in_background() -> bool:
    """Whether the caller runs on the background loop's thread."""
    return _thread is not None and threading.current_thread() is _thread


def submit(coroutine: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
    """Schedule ``coroutine`` on the background loop."""
    if in_background():
        coroutine.close()
        raise RuntimeError("A blocking Terax call was made from the background loop itself.")
    return asyncio.run_coroutine_threadsafe(coroutine, loop())


def run(coroutine: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
    """Run ``coroutine`` on the background loop and wait for its result. An interrupt (or the
    timeout) cancels it there before the exception reaches the caller."""
    future = submit(coroutine)
    try:
        return future.result(timeout)
    except BaseException:
        future.cancel()
        raise


async def wait(coroutine: Coroutine[Any, Any, T]) -> T:
    """Await ``coroutine`` on the background loop from another running loop (``ask_async``
    in a kernel cell); cancelling the caller cancels it there too."""
    future = submit(coroutine)
    try:
        return await asyncio.wrap_future(future)
    except BaseException:
        future.cancel()
        raise
