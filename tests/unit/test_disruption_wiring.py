"""How `podsched apiserver` runs its controllers: the address it reaches itself at, and how a controller
task is stopped, or reported when it ended on its own; the first controller to fail stops the others and
is named. (The real process, with the controller running and stopping on SIGTERM, is tested in
tests/integration/test_disruption.py.)"""

from __future__ import annotations

import asyncio
import logging

import pytest

from cluster.cli import apiserver as apiserver_cli
from cluster.cli.controllers import ControllerFailed, run_controllers
from cluster.client import Client
from cluster.controllers import ControllerSettings, DisruptionController, PodGarbageCollector


@pytest.mark.parametrize(
    ("served", "reached"),
    [
        ("127.0.0.1:7443", "127.0.0.1:7443"),
        ("0.0.0.0:7443", "127.0.0.1:7443"),
        (":7443", "127.0.0.1:7443"),
        ("[::]:7443", "[::1]:7443"),
        ("localhost:8000", "localhost:8000"),
        ("10.0.0.5:7443", "10.0.0.5:7443"),
    ],
    ids=["loopback", "ipv4-wildcard", "empty-host", "ipv6-wildcard", "host-name", "one-interface"],
)
def test_the_controllers_reach_the_server_on_its_own_address(served: str, reached: str) -> None:
    assert apiserver_cli._own_address(served) == reached


async def test_no_controllers_nothing_to_stop() -> None:
    assert await apiserver_cli._stop_controllers(None) is None


async def test_running_controllers_are_cancelled_quietly() -> None:
    started = asyncio.Event()

    async def forever() -> None:
        started.set()
        await asyncio.Event().wait()

    running = asyncio.create_task(forever())
    await started.wait()
    assert await apiserver_cli._stop_controllers(running) is None
    assert running.cancelled()


async def test_failed_controllers_are_reported(caplog: pytest.LogCaptureFixture) -> None:
    async def failing() -> None:
        raise RuntimeError("informer broke")

    running = asyncio.create_task(failing())
    await asyncio.wait([running])
    with caplog.at_level(logging.ERROR, logger=apiserver_cli.__name__):
        assert await apiserver_cli._stop_controllers(running) == "RuntimeError: informer broke"
    assert "the controllers failed" in caplog.text
    assert "informer broke" in caplog.text


async def test_controllers_that_return_are_reported() -> None:
    async def returning() -> None:
        return None

    running = asyncio.create_task(returning())
    await asyncio.wait([running])
    assert await apiserver_cli._stop_controllers(running) == "they ended without an error"


async def test_a_failing_controller_stops_the_others_and_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    cancelled = asyncio.Event()

    async def forever(self: object) -> None:
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()

    async def failing(self: object) -> None:
        await asyncio.sleep(0)
        raise RuntimeError("informer broke")

    monkeypatch.setattr(DisruptionController, "run", forever)
    monkeypatch.setattr(PodGarbageCollector, "run", failing)
    settings = ControllerSettings(pod_gc_quarantine_s=40.0)
    async with Client("127.0.0.1:1") as client:
        with pytest.raises(ControllerFailed, match=r"^the podgc controller: RuntimeError: informer broke$"):
            await run_controllers(client, ("disruption", "podgc"), settings)
    assert cancelled.is_set()
