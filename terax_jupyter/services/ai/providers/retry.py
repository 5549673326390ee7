"""Bounded retries of a provider call that was turned away before its answer began."""

from __future__ import annotations

import asyncio
import random
import time
from contextlib import aclosing
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping

    from terax_jupyter.exceptions import TeraxError

T = TypeVar("T")

# 429, and the statuses providers use when they are overloaded or briefly down (529 is
# Anthropic's "overloaded"). Any other answer is final: repeating it would change nothing.
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504, 529})


def retry_after(headers: Mapping[str, str]) -> float | None:
    """The wait a provider asks for, in seconds: ``retry-after-ms`` (OpenAI, more precise),
    else ``Retry-After`` as seconds or an HTTP date; None without a usable hint."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            value = float(millis) / 1000
        except ValueError:
            value = -1.0
        if value >= 0:
            return value
    text = headers.get("retry-after")
    if text is None:
        return None
    try:
        seconds = float(text)
    except ValueError:
        try:
            moment = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if moment is None:
            return None
        seconds = moment.timestamp() - time.time()
    if seconds != seconds:  # NaN
        return None
    return max(0.0, seconds)


class RetryableFailure(Exception):
    """An attempt failed in a way worth repeating; never leaves ``RetryPolicy``, which
    raises ``error`` itself once it gives up."""

    def __init__(self, error: TeraxError, retry_after: float | None = None) -> None:
        super().__init__(error.message)
        self.error = error
        self.retry_after = retry_after


@dataclass(frozen=True)
class RetryPolicy:
    """429 and overloaded answers are retried up to ``max_retries`` times, only before any
    event reached the caller (a repeated half answer would be a different answer).

    The provider's Retry-After is honoured as given; one longer than ``max_delay`` fails at
    once (the caller shows it rather than hanging). Without a hint the waits grow from
    ``base`` seconds, doubled each time, with some jitter. ``sleep`` is injectable for tests.
    """

    max_retries: int = 3
    max_delay: float = 20.0
    base: float = 0.5
    sleep: Callable[[float], Awaitable[None]] = field(
        default=asyncio.sleep, compare=False, repr=False
    )

    def delay(self, attempt: int, hint: float | None) -> float | None:
        """Seconds to wait before retry ``attempt + 1`` (``attempt`` retries already made),
        or None when the failure is to be raised."""
        if attempt >= self.max_retries:
            return None
        if hint is not None:
            return None if hint > self.max_delay else hint
        backoff = self.base * (2**attempt) * (0.75 + random.random() / 2)
        return min(self.max_delay, backoff)

    async def stream(
        self, attempt: Callable[[], AsyncGenerator[T, None]]
    ) -> AsyncGenerator[T, None]:
        """The events of ``attempt()``, repeated while it fails with ``RetryableFailure``
        before yielding anything."""
        retries = 0
        while True:
            yielded = False
            try:
                async with aclosing(attempt()) as events:
                    async for event in events:
                        yielded = True
                        yield event
                return
            except RetryableFailure as failure:
                wait = None if yielded else self.delay(retries, failure.retry_after)
                if wait is None:
                    raise failure.error from None
            retries += 1
            await self.sleep(wait)

    async def call(self, attempt: Callable[[], Awaitable[T]]) -> T:
        """The result of ``attempt()``, repeated while it fails with ``RetryableFailure``."""
        retries = 0
        while True:
            try:
                return await attempt()
            except RetryableFailure as failure:
                wait = self.delay(retries, failure.retry_after)
                if wait is None:
                    raise failure.error from None
            retries += 1
            await self.sleep(wait)
