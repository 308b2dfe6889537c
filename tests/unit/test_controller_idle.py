"""What `InformerController` tells a caller that drives the cluster in lock step (`podsched simulate`):
``idle()`` while no key is ready or being synced (a key waiting out its backoff after a failure is not
waited for: it fails again until what it read changes), and ``informer_revisions()`` by kind plural."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

from cluster.api import errors
from cluster.controllers import InformerController


class Stub(InformerController):
    name = "stub"

    def __init__(self) -> None:
        super().__init__(client=None)  # type: ignore[arg-type]
        self.release = asyncio.Event()
        self.fail = False
        self.informers = {"pod": SimpleNamespace(resource_version="7"),
                          "resourceclaimtemplate": SimpleNamespace(resource_version="")}

    def _informers(self) -> Mapping[str, Any]:
        return self.informers

    async def _sync(self, key: str) -> None:
        await self.release.wait()
        if self.fail:
            raise errors.NotFound(f"template of {key} not found")

    def _what(self, key: str) -> str:
        return key

    def _after_sync(self, tasks: asyncio.TaskGroup) -> None:
        pass


async def test_idle_until_a_key_is_ready_and_while_a_failed_one_backs_off() -> None:
    controller = Stub()
    assert controller.idle()
    controller._queue.add("p")
    assert not controller.idle()
    syncing = asyncio.create_task(controller._process(await controller._queue.get()))
    await asyncio.sleep(0)
    assert not controller.idle()  # taken from the queue, being synced
    controller.fail = True
    controller.release.set()
    await syncing
    assert len(controller._queue) == 1  # back after its backoff...
    assert controller.idle()  # ...which the caller does not wait out
    controller._queue.add("p")  # something it reads changed
    assert not controller.idle()


def test_informer_revisions_by_kind_plural() -> None:
    assert Stub().informer_revisions() == {"pods": 7, "resourceclaimtemplates": 0}
