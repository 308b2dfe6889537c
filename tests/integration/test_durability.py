"""`kill -9` of the API server loses nothing: restarted on the same store (SQLite data directory or
etcd), it serves every acknowledged object with the resourceVersion it had, and carries on."""

from __future__ import annotations

import asyncio

from cluster.api import errors, kinds, objects_pb2
from cluster.client import Client
from cluster.launcher.process import ApiServerProcess
from tests.builders import pod
from tests.integration.helpers import MANIFESTS, run_cli

NAMESPACE = "default"


async def _snapshot(client: Client) -> tuple[dict[str, bytes], int]:
    """Every object, as kind/namespace/name -> its serialized form (resourceVersion included), and the
    newest resourceVersion among them."""
    objects = {}
    newest = 0
    for kind in kinds.KINDS:
        for obj in (await client.list_all(kind)).items:
            meta = obj.metadata
            objects[f"{kind.name}/{meta.namespace}/{meta.name}"] = obj.SerializeToString(deterministic=True)
            newest = max(newest, int(meta.resource_version))
    return objects, newest


def _pod(name: str) -> objects_pb2.Pod:
    return pod(name, NAMESPACE, spec={"terminationGracePeriodSeconds": 4}, image="busybox")


async def test_kill_9_and_restart_loses_nothing(fresh_apiserver: ApiServerProcess) -> None:
    server = fresh_apiserver
    applied = run_cli(server.address, "apply", "-f", str(MANIFESTS))
    assert applied.code == 0, applied.stderr

    async with Client(server.address) as client:
        await client.bind(NAMESPACE, "cache", "node-a")
        # Writes acknowledged just before the crash must survive it.
        await asyncio.gather(*(client.create(_pod(f"burst-{i}")) for i in range(40)))
        await client.bind(NAMESPACE, "burst-0", "node-b")
        # A graceful deletion in flight: the restarted server finishes it.
        marked = await client.delete("Pod", "burst-0", NAMESPACE)
        assert marked.metadata.HasField("deletion_timestamp")
        before, newest = await _snapshot(client)

    server.kill()
    assert server.process.returncode == -9
    server.restart()

    async with Client(server.address) as client:
        after, _ = await _snapshot(client)
        # The pod deleted gracefully may already be gone; everything else is exactly as it was.
        in_flight = f"Pod/{NAMESPACE}/burst-0"
        assert len(before) > 50
        assert {k: v for k, v in after.items() if k != in_flight} == {
            k: v for k, v in before.items() if k != in_flight
        }

        # The revision counter carries on above everything written before the crash.
        created = await client.create(_pod("after-restart"))
        assert int(created.metadata.resource_version) > newest

        async with asyncio.timeout(20):
            while True:
                try:
                    await client.get("Pod", "burst-0", NAMESPACE)
                except errors.NotFound:
                    break
                await asyncio.sleep(0.2)
