"""A real `podsched scheduler` holding only the scheduler role (a podsched:schedulers token) elects
itself and binds pods on an API server that authenticates and authorizes every call; pods
are submitted by a client-role user with `podsched apply --token`, as a user would."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cluster.api import objects_pb2
from cluster.api.kinds import LEASE, POD
from cluster.client import Client, ClientCredentials
from cluster.launcher.process import ApiServerProcess, SchedulerProcess, cli_env
from tests.integration.helpers import REPO, node_manifest, pod_manifest, run_cli, write_yaml

ADMIN_TOKEN, SCHEDULER_TOKEN, CLIENT_TOKEN = "admin-token", "scheduler-token", "client-token"
NAMESPACE = "auth-scheduling"
#: How long electing and binding may take on a loaded 2-core box.
SETTLE_TIMEOUT_S = 30.0


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    directory = tmp_path_factory.mktemp("auth-scheduler")
    tokens = directory / "tokens.csv"
    tokens.write_text(
        f"{ADMIN_TOKEN},ada,1,system:masters\n"
        f"{SCHEDULER_TOKEN},kube-scheduler,2,podsched:schedulers\n"
        f"{CLIENT_TOKEN},cleo,3,podsched:clients\n"
    )
    server = ApiServerProcess(
        ["--data-dir", str(directory / "data")], extra_args=["--token-auth-file", str(tokens)]
    )
    with server:
        yield server


async def _bound_node(client: Client, name: str) -> str:
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    while time.monotonic() < deadline:
        pod = await client.get(POD, name, NAMESPACE)
        assert isinstance(pod, objects_pb2.Pod)
        if pod.spec.node_name:
            return pod.spec.node_name
        await asyncio.sleep(0.2)
    raise AssertionError(f"pod {NAMESPACE}/{name} was not bound within {SETTLE_TIMEOUT_S:g}s")


async def test_a_scheduler_with_the_scheduler_role_elects_and_binds(
    secured: ApiServerProcess, tmp_path: Path
) -> None:
    node = write_yaml(tmp_path / "node.yaml", node_manifest("auth-node"))
    admin_apply = run_cli(secured.address, "apply", "-f", node, "--token", ADMIN_TOKEN)
    assert admin_apply.code == 0, admin_apply.stderr
    pod = write_yaml(tmp_path / "pod.yaml", pod_manifest("web", NAMESPACE))
    client_apply = run_cli(secured.address, "apply", "-f", pod, "--token", CLIENT_TOKEN)
    assert client_apply.code == 0, client_apply.stderr
    scheduler = SchedulerProcess(
        ["--server", secured.address, "--metrics-addr", "127.0.0.1:0", "--token", SCHEDULER_TOKEN],
        env=cli_env(""), cwd=REPO,
    )
    scheduler.start()
    try:
        async with Client(secured.address, credentials=ClientCredentials(token=ADMIN_TOKEN)) as client:
            assert await _bound_node(client, "web") == "auth-node"
            lease = await client.get(LEASE, "kube-scheduler", "kube-system")
            assert isinstance(lease, objects_pb2.Lease)
            assert lease.spec.holder_identity == scheduler.identity
    finally:
        scheduler.stop()
    assert "PERMISSION_DENIED" not in scheduler.log() and "forbidden" not in scheduler.log(), scheduler.log()
