"""The long-running processes, `podsched apiserver` and `podsched scheduler`, run on uvloop
(cluster/cli/eventloop.py: each has uvloop's loop loaded, which nothing else in them imports) and serve on
it: a pod created through the API server gets bound."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from cluster.client.client import Client
from cluster.launcher.process import ApiServerProcess, SchedulerProcess, cli_env
from tests import builders
from tests.integration.helpers import REPO

BIND_TIMEOUT_S = 60.0


def runs_uvloop(pid: int) -> bool:
    maps = Path(f"/proc/{pid}/maps").read_text()
    return any("/uvloop/loop." in line for line in maps.splitlines())


async def test_the_api_server_and_the_scheduler_run_on_uvloop(tmp_path: Path) -> None:
    with ApiServerProcess(["--data-dir", str(tmp_path / "data")]) as server:
        assert runs_uvloop(server.pid)
        scheduler = SchedulerProcess(["--server", server.address], env=cli_env(""), cwd=REPO)
        scheduler.start()
        try:
            assert runs_uvloop(scheduler.pid)
            async with Client(server.address, timeout_s=30.0) as api:
                await api.create(builders.node("loop-node", allocatable=builders.ROOMY))
                await api.create(builders.pod("loop-pod", image="pause"))
                deadline = time.monotonic() + BIND_TIMEOUT_S
                while not (await api.get("pods", "loop-pod", "default")).spec.node_name:
                    assert time.monotonic() < deadline, "the pod was not bound"
                    await asyncio.sleep(0.2)
        finally:
            scheduler.stop()
