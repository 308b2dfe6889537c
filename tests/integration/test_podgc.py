"""The pod garbage collector inside the real `podsched apiserver` process, on each store, with a real
scheduler process: a node filled with pods is deleted with `podsched delete node`, its pods go once the
(shortened) quarantine is over, and a node of the same name that comes back has its whole capacity for
new pods. Also: `--controllers` turns it off, and a bad `--controllers` is refused by the real CLI."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cluster.api import objects_pb2
from cluster.client import Client
from cluster.launcher.process import ApiServerProcess
from tests.integration.conftest import own_apiserver
from tests.integration.helpers import REPO, node_manifest, pod_manifest, run_cli
from tests.integration.test_scheduler import all_bound, apply, eventually, pods_in, running_scheduler

NODE = "f-1"
#: Four pods of half a CPU fill the node: a fifth, or any pod while the old ones linger, does not fit.
NODE_CPU = "2"
POD_CPU = "500m"
PODS = 4
QUARANTINE = "1s"
LOG_WAIT_S = 20.0


def fill(namespace: str, prefix: str) -> list[dict[str, object]]:
    return [pod_manifest(f"{prefix}-{i}", namespace, cpu=POD_CPU) for i in range(PODS)]


async def none_left(client: Client, namespace: str) -> bool | None:
    return True if not await pods_in(client, namespace) else None


@pytest.fixture
def gc_apiserver(backend: str, tmp_path: Path) -> Iterator[ApiServerProcess]:
    """An API server with the default controllers and a short quarantine, on a store of its own, and a
    scheduler of it."""
    with own_apiserver(backend, tmp_path, name_prefix="podgc",
                       extra_args=["--pod-gc-quarantine", QUARANTINE]) as server, \
            running_scheduler(server.address):
        yield server


@pytest.fixture
def apiserver_without_podgc(backend: str, tmp_path: Path) -> Iterator[ApiServerProcess]:
    """An API server running every controller but podgc."""
    extra_args = ["--controllers=*,-podgc"]
    with own_apiserver(backend, tmp_path, name_prefix="nogc", extra_args=extra_args) as server:
        yield server


async def test_deleting_a_node_frees_its_pods_and_a_returning_node_has_its_capacity(
    gc_apiserver: ApiServerProcess, tmp_path: Path, namespace: str
) -> None:
    server = gc_apiserver
    async with Client(server.address, timeout_s=30.0) as client:
        apply(server.address, tmp_path, node_manifest(NODE, cpu=NODE_CPU), *fill(namespace, "old"))
        bound = await eventually(lambda: all_bound(client, namespace, PODS), "the first pods bound")
        assert {pod.spec.node_name for pod in bound} == {NODE}

        deleted = run_cli(server.address, "delete", "node", NODE)
        assert deleted.code == 0, deleted.stderr
        assert deleted.stdout.strip() == f'node "{NODE}" deleted'
        await eventually(lambda: none_left(client, namespace), "the pods of the deleted node gone")
        assert "pod garbage collector synced" in server.log()

        apply(server.address, tmp_path, node_manifest(NODE, cpu=NODE_CPU), *fill(namespace, "new"))
        bound = await eventually(lambda: all_bound(client, namespace, PODS), "the new pods bound")
        assert {pod.spec.node_name for pod in bound} == {NODE}
        assert {pod.metadata.name for pod in bound} == {f"new-{i}" for i in range(PODS)}
        events = (await client.list("events", namespace)).items
        # (A pod tried before the scheduler saw the node come back may have failed for want of nodes.)
        crowded = [e.message for e in events if isinstance(e, objects_pb2.Event)
                   and e.reason == "FailedScheduling" and e.involved_object.name.startswith("new-")
                   and ("Insufficient cpu" in e.message or "Too many pods" in e.message)]
        assert crowded == []


def test_controllers_without_podgc_run_without_it(apiserver_without_podgc: ApiServerProcess) -> None:
    server = apiserver_without_podgc
    deadline = time.monotonic() + LOG_WAIT_S
    while "disruption controller synced" not in server.log():
        assert time.monotonic() < deadline, server.log()
        time.sleep(0.1)
    assert "pod garbage collector" not in server.log()


def test_an_unknown_controller_is_a_usage_error() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "cluster.cli", "apiserver", "--controllers", "disruption,podgcc"],
        capture_output=True, text=True, cwd=REPO, timeout=60,
    )
    assert result.returncode == 2
    assert ("argument --controllers: invalid --controllers 'disruption,podgcc': unknown controller "
            '"podgcc" (known: disruption, podgc, resourcequota, podgroup, leasecandidategc, '
            'resourceclaim, persistentvolume-binder, ephemeral-volume, volume-provisioner)') in result.stderr
