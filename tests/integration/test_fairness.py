"""Flow control under a flood, with real processes: an API server on a real etcd with a token file, three
`podsched scheduler` replicas with a scheduler token and short lease timings, and a flooding client
process (flooder.py) that creates pods and opens watches from hundreds of concurrent tasks under one
client token, while a second, well-behaved client creates a pod now and then.

While the flood lasts, the leader keeps its lease (the holder and leaseTransitions never change, and only
one replica ever logs that it leads), every pod of the well-behaved client is accepted and bound, and the
flooder is refused with RESOURCE_EXHAUSTED (so the limit was really reached). The server's flow-control
metrics agree: refusals at global-default only, lease renewals dispatched at leader-election.

Lease renewals must land within the 1.5 s renew deadline: a wall-clock bound, so the module runs alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from cluster.api import objects_pb2
from cluster.client import Client, ClientCredentials, NotFound
from cluster.launcher.process import ApiServerProcess
from tests.builders import IMAGE, node, pod
from tests.integration.conftest import own_apiserver
from tests.integration.test_scheduler import REPO, eventually
from tests.integration.test_scheduler_ha import replicas

pytestmark = [pytest.mark.timing, pytest.mark.etcd]

ADMIN_TOKEN, SCHEDULER_TOKEN, FLOODER_TOKEN, ALICE_TOKEN = (
    "admin-token-0123", "scheduler-token-0123", "flooder-token-0123", "alice-token-0123"
)
TOKEN_FILE = f"""\
{ADMIN_TOKEN},admin,uid-admin,"system:masters"
{SCHEDULER_TOKEN},podsched-scheduler,uid-scheduler,"podsched:schedulers"
{FLOODER_TOKEN},flooder,uid-flooder,"podsched:clients"
{ALICE_TOKEN},alice,uid-alice,"podsched:clients"
"""
REPLICAS = 3
NODES = 4
FLOOD_S = 15.0
#: Concurrent create loops and watch loops of the flooder: enough that without flow control the leader's
#: renewals miss their deadline (measured: lease lookups took up to 2.3 s, and the lease changed hands).
#: The watchers stay under the per-user watch limit (100), so their refusals are flow control's.
FLOOD_CREATORS = 1000
FLOOD_WATCHERS = 90
#: A server sized small (12 seats: global-default gets 3 of them, beside 50 queued per user), so that
#: the flood fills global-default whatever share of it gRPC hands to the server's handlers at a time on a
#: busy machine; with the defaults (90 seats) some runs never reached the limit.
SMALL_LIMITS = ["--max-requests-inflight", "8", "--max-mutating-requests-inflight", "4"]
#: How often the well-behaved client creates a pod during the flood.
ALICE_PERIOD_S = 0.5


def small_pod(name: str, namespace: str) -> objects_pb2.Pod:
    return pod(name, namespace, image=IMAGE, cpu="10m", memory="16Mi")


def token_file(tmp_path: Path) -> str:
    path = tmp_path / "tokens.csv"
    path.write_text(TOKEN_FILE)
    return str(path)


def as_user(address: str, token: str) -> Client:
    return Client(address, credentials=ClientCredentials(token=token), timeout_s=30.0)




async def lease_state(admin: Client) -> tuple[str, int]:
    try:
        lease = await admin.get("leases", "kube-scheduler", "kube-system")
    except NotFound:
        return "", 0
    return lease.spec.holder_identity, lease.spec.lease_transitions  # type: ignore[attr-defined]


@contextlib.asynccontextmanager
async def watching_the_lease(admin: Client) -> AsyncIterator[list[tuple[str, int]]]:
    """Every distinct (holderIdentity, leaseTransitions) seen while the block runs, polled as an admin
    (exempt from flow control, so the probe itself never waits behind the flood)."""
    seen: list[tuple[str, int]] = []

    async def poll() -> None:
        while True:
            state = await lease_state(admin)
            if not seen or seen[-1] != state:
                seen.append(state)
            await asyncio.sleep(0.2)

    task = asyncio.create_task(poll())
    try:
        yield seen
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def flood(address: str, namespace: str) -> dict[str, dict[str, object]]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.integration.flooder", address, FLOODER_TOKEN, namespace,
        "--seconds", f"{FLOOD_S:g}", "--creators", str(FLOOD_CREATORS), "--watchers", str(FLOOD_WATCHERS),
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), FLOOD_S + 60)
    assert process.returncode == 0, stderr.decode()
    return json.loads(stdout)  # type: ignore[no-any-return]


async def well_behaved(alice: Client, namespace: str, until: float) -> list[str]:
    """Create a pod every ALICE_PERIOD_S until ``until``; the names created (a refusal fails the test)."""
    names = []
    while time.monotonic() < until:
        name = f"alice-{len(names)}"
        await alice.create(small_pod(name, namespace))
        names.append(name)
        await asyncio.sleep(ALICE_PERIOD_S)
    return names


@pytest.fixture
def secured_apiserver(tmp_path: Path) -> Iterator[ApiServerProcess]:
    """An API server on a one-member etcd of its own, authenticating with TOKEN_FILE; flow control's
    default limits."""
    extra = ["--token-auth-file", token_file(tmp_path), *SMALL_LIMITS, "--metrics-addr", "127.0.0.1:0"]
    with own_apiserver("etcd", tmp_path, name_prefix="fair", extra_args=extra) as server:
        yield server


async def test_a_flood_of_client_traffic_neither_deposes_the_leader_nor_stops_binding(
    secured_apiserver: ApiServerProcess,
) -> None:
    await run_flood_scenario(secured_apiserver)


async def run_flood_scenario(server: ApiServerProcess) -> None:
    async with as_user(server.address, ADMIN_TOKEN) as admin, as_user(server.address, ALICE_TOKEN) as alice:
        for i in range(NODES):
            await admin.create(node(f"node-{i}", cpu="64", memory="256Gi", pods="500"))
        # The HA tests' replicas and short lease timings: a renewal slower than 1.5 s loses the lease.
        with replicas(server.address, REPLICAS, "--token", SCHEDULER_TOKEN) as processes:
            holder, transitions = await eventually(lambda: _held(admin), "a leader", within=20)
            assert holder in {process.identity for process in processes}
            await alice.create(small_pod("warm-up", "calm"))
            await eventually(lambda: _bound(admin, "calm", ["warm-up"]), "the warm-up pod bound", within=20)

            async with watching_the_lease(admin) as seen:
                until = time.monotonic() + FLOOD_S
                flooded, names = await asyncio.gather(
                    flood(server.address, "flood"), well_behaved(alice, "calm", until)
                )
                await eventually(lambda: _bound(admin, "calm", names), f"{len(names)} pods bound", within=30)

            counts = flooded["counts"]
            attempts = sum(n for key, n in counts.items() if key.startswith("create_"))  # type: ignore[misc]
            assert attempts >= 2000, counts
            assert counts.get("create_RESOURCE_EXHAUSTED", 0) > 0, counts
            assert "Too many requests, please try again later" in str(flooded["messages"])
            assert seen == [(holder, transitions)], f"the lease changed hands under the flood: {seen}"
            leading = [line for process in processes for line in process.lines if "leading (lease" in line]
            assert len(leading) == 1, leading

            rejected, dispatched = flow_control_counts(server)
            assert rejected.get("global-default", 0) > 0, rejected
            assert set(rejected) == {"global-default"}, rejected
            assert dispatched.get("leader-election", 0) > 0, dispatched


def flow_control_counts(server: ApiServerProcess) -> tuple[dict[str, float], dict[str, float]]:
    """Requests rejected and dispatched by priority level, from the server's /metrics."""
    assert server.metrics_url is not None
    with urllib.request.urlopen(f"{server.metrics_url}/metrics", timeout=10) as response:
        text = response.read().decode()
    rejected: dict[str, float] = {}
    dispatched: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            counts = {"apiserver_flowcontrol_rejected_requests_total": rejected,
                      "apiserver_flowcontrol_dispatched_requests_total": dispatched}.get(sample.name)
            if counts is not None:
                level = sample.labels["priority_level"]
                counts[level] = counts.get(level, 0.0) + sample.value
    return rejected, dispatched


async def _held(admin: Client) -> tuple[str, int] | None:
    state = await lease_state(admin)
    return state if state[0] else None


async def _bound(admin: Client, namespace: str, names: list[str]) -> bool | None:
    """True once every pod of ``names`` is bound, else None (for ``eventually``)."""
    pods = {p.metadata.name: p for p in (await admin.list("pods", namespace)).items}  # type: ignore[attr-defined]
    return True if all(name in pods and pods[name].spec.node_name for name in names) else None
