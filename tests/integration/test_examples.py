"""The programs in examples/, run as a user runs them (`podsched demo` has tests/integration/test_demo.py)."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from collections.abc import Callable

from cluster.api import objects_pb2
from cluster.cli.process import ApiServerProcess, cli_env
from cluster.client import Client
from tests.integration.helpers import EXAMPLES, REPO

SUBMIT_TIMEOUT_S = 60.0


async def _play_scheduler(client: Client, namespace: str, node: str) -> None:
    """Bind every pod that appears unbound in ``namespace`` to ``node``, as a scheduler would."""
    async for event in client.watch("Pod", namespace):
        pod = event.object
        if event.type != "DELETED" and not pod.spec.node_name:
            await client.bind(namespace, pod.metadata.name, node)


async def test_submit_pods_waits_until_bound(
    apiserver: ApiServerProcess, client: Client, namespace: str, unique: Callable[[str], str]
) -> None:
    node = unique("node")
    await client.create(objects_pb2.Node(metadata=objects_pb2.ObjectMeta(name=node)))
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(EXAMPLES / "submit_pods.py"),
        "--count", "3", "--namespace", namespace, "--timeout", "30",
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env(apiserver.address), cwd=REPO,
    )
    scheduler = asyncio.create_task(_play_scheduler(client, namespace, node))
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), SUBMIT_TIMEOUT_S)
    finally:
        scheduler.cancel()
        await asyncio.gather(scheduler, return_exceptions=True)
    assert process.returncode == 0, stderr.decode()
    lines = stdout.decode().splitlines()
    created = [line for line in lines if line.endswith(" created")]
    bound = [line for line in lines if " bound to " in line]
    assert len(created) == 3
    assert sorted(bound) == sorted(f"{line.removesuffix(' created')} bound to {node}" for line in created)
    pods = (await client.list("Pod", namespace)).items
    assert len(pods) == 3 and all(pod.spec.node_name == node for pod in pods)


def test_submit_pods_times_out_naming_unbound_pods(apiserver: ApiServerProcess, namespace: str) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "submit_pods.py"), "--count", "2", "--namespace", namespace,
         "--timeout", "1"],
        capture_output=True, text=True, env=cli_env(apiserver.address), cwd=REPO, timeout=SUBMIT_TIMEOUT_S,
    )
    assert done.returncode == 1
    assert re.search(r"timed out after 1s; not bound: submit-\w+-0, submit-\w+-1", done.stderr)
