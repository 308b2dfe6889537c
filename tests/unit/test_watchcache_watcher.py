"""A cache watcher says when it has caught up: once it has sent its initial frames and what was queued
meanwhile, and first waits for news; flow control gives a starting watch's seat back then, so a watch with
nothing to send (an empty kind, a resume from a recent revision) does not hold it for its setup time."""

from __future__ import annotations

import asyncio

from cluster.api.kinds import PERSISTENT_VOLUME
from cluster.apiserver.selection import Selection
from cluster.apiserver.watchcache.watcher import CacheWatcher


def _watcher(initial: list[bytes]) -> CacheWatcher:
    return CacheWatcher(Selection.parse(PERSISTENT_VOLUME), PERSISTENT_VOLUME.key_prefix(), 10, initial)


async def test_a_watcher_with_nothing_to_send_is_caught_up_at_once() -> None:
    calls: list[str] = []
    frames = _watcher([]).frames(lambda: calls.append("caught up"))
    waiting = asyncio.ensure_future(frames.__anext__())
    await asyncio.sleep(0)
    assert calls == ["caught up"] and not waiting.done()
    waiting.cancel()


async def test_a_watcher_is_caught_up_after_its_initial_frames_and_only_once() -> None:
    calls: list[str] = []
    watcher = _watcher([b"a", b"b"])
    frames = watcher.frames(lambda: calls.append("caught up"))
    assert [await frames.__anext__(), await frames.__anext__()] == [b"a", b"b"]
    assert calls == []
    waiting = asyncio.ensure_future(frames.__anext__())
    await asyncio.sleep(0)
    assert calls == ["caught up"]
    watcher.close()
    await asyncio.gather(waiting, return_exceptions=True)
    assert calls == ["caught up"]
