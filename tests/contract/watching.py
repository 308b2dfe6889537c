"""Helpers for reading watches in tests: bounded waits, and a sentinel write to prove nothing extra came."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from store.base import EventType, Store, WatchEvent

#: How long a test waits for an event it expects. Generous: several suites share two cores.
EVENT_TIMEOUT_S = 20.0


async def take(events: AsyncIterator[WatchEvent], count: int) -> list[WatchEvent]:
    """The next ``count`` events of ``events``."""
    taken: list[WatchEvent] = []
    async with asyncio.timeout(EVENT_TIMEOUT_S):
        while len(taken) < count:
            taken.append(await anext(events))
    return taken


async def take_until_sentinel(store: Store, events: AsyncIterator[WatchEvent], key: str) -> list[WatchEvent]:
    """Write ``key`` (a sentinel inside the watched prefix) and return every event that arrives
    before its own: exactly the events that were still due, none missing and none repeated."""
    written = await store.create(key, b"sentinel")
    assert written.succeeded, f"sentinel {key} already exists"
    taken: list[WatchEvent] = []
    async with asyncio.timeout(EVENT_TIMEOUT_S):
        while True:
            event = await anext(events)
            if event.key == key:
                assert event.revision == written.revision and event.type is EventType.PUT
                return taken
            taken.append(event)


async def close(events: AsyncIterator[WatchEvent]) -> None:
    aclose = getattr(events, "aclose", None)
    if aclose is not None:
        await aclose()


def summary(events: list[WatchEvent]) -> list[tuple[str, str, int]]:
    """(type, key, revision) of each event: short assertion messages."""
    return [(event.type.value, event.key, event.revision) for event in events]
