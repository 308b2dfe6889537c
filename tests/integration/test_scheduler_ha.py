"""Several `podsched scheduler` processes racing for the Lease, on each backend: one leads and binds
(under its fencing token), a SIGTERM hands over within one retry period, a SIGKILL within the lease,
a leader paused past its lease is deposed and steps down without landing a write, and the flags and
the config file's leaderElection section set the lease."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from cluster.api import objects_pb2
from cluster.client import Client, NotFound
from cluster.launcher.process import ApiServerProcess, SchedulerProcess, cli_env
from tests.builders import IMAGE, node, pod
from tests.integration.test_scheduler import REPO, eventually

LEASE_S, RENEW_S, RETRY_S = 2.0, 1.5, 0.5
TIMINGS = ["--leader-elect-lease-duration", f"{LEASE_S:g}s", "--leader-elect-renew-deadline", f"{RENEW_S:g}s",
           "--leader-elect-retry-period", f"{RETRY_S:g}s"]
#: The failover bounds: a killed leader is replaced within the lease plus one jittered retry and a
#: second; a leader that releases the lease, within one jittered retry and a second.
KILL_BOUND_S = LEASE_S + 1.2 * RETRY_S + 1.0
RELEASE_BOUND_S = 1.2 * RETRY_S + 1.0
FENCE_ANNOTATION = "podsched.io/bound-under-fence"
WRITTEN_ANNOTATION = "podsched.io/written-under-fence"


def replica(server: str, *args: str) -> SchedulerProcess:
    return SchedulerProcess(
        ["--server", server, "--metrics-addr", "127.0.0.1:0", *TIMINGS, *args], env=cli_env(""), cwd=REPO,
    )


@contextlib.contextmanager
def replicas(server: str, count: int, *args: str) -> Iterator[list[SchedulerProcess]]:
    started = [replica(server, *args) for _ in range(count)]
    try:
        for process in started:
            process.start()
        yield started
    finally:
        for process in started:
            if process.process is not None and process.process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    process.process.send_signal(signal.SIGCONT)
            process.stop()


async def holder(client: Client, name: str = "kube-scheduler") -> str:
    try:
        lease = await client.get("leases", name, "kube-system")
    except NotFound:
        return ""
    return lease.spec.holder_identity  # type: ignore[attr-defined]


async def new_holder(client: Client, among: list[SchedulerProcess], other_than: str, within: float) -> str:
    async def probe() -> str | None:
        current = await holder(client)
        return current if current and current != other_than else None

    identity = await eventually(probe, f"a leader other than {other_than!r}", within=within)
    assert identity in {process.identity for process in among}, identity
    return identity


def leader_of(processes: list[SchedulerProcess], identity: str) -> SchedulerProcess:
    return next(process for process in processes if process.identity == identity)


#: What each test pod requests: small enough that every pod fits on node-1.
POD_REQUESTS = {"cpu": "100m", "memory": "64Mi"}


async def submit_and_wait_bound(
    client: Client, namespace: str, prefix: str, count: int
) -> list[objects_pb2.Pod]:
    pods = [pod(f"{prefix}-{i}", namespace, image=IMAGE, **POD_REQUESTS) for i in range(count)]
    await asyncio.gather(*(client.create(pod) for pod in pods))

    async def bound() -> list[objects_pb2.Pod] | None:
        pods = [p for p in (await client.list("pods", namespace)).items
                if p.metadata.name.startswith(f"{prefix}-")]  # type: ignore[attr-defined]
        return pods if len(pods) == count and all(p.spec.node_name for p in pods) else None  # type: ignore[attr-defined]

    return await eventually(bound, f"{count} pods {prefix}-* bound", within=30)


def fenced_by(pods: list[objects_pb2.Pod]) -> set[str]:
    """The holders whose fencing tokens the binds of ``pods`` landed under."""
    return {p.metadata.annotations[FENCE_ANNOTATION].rpartition("@")[0] for p in pods}


def metric(process: SchedulerProcess, name: str) -> str:
    status, body = process.get("/metrics")
    assert status == 200
    return next(line for line in body.splitlines() if line.startswith(name))


@pytest.mark.timing
async def test_one_leader_binds_and_a_sigterm_hands_over_within_a_retry_period(
    fresh_apiserver: ApiServerProcess, namespace: str
) -> None:
    async with Client(fresh_apiserver.address) as client:
        await client.create(node("node-1", cpu="8", memory="16Gi", pods="110"))
        with replicas(fresh_apiserver.address, 3) as processes:
            first = await new_holder(client, processes, "", within=15)
            leader = leader_of(processes, first)
            pods = await submit_and_wait_bound(client, namespace, "before", 5)
            assert fenced_by(pods) == {first}
            assert sum("podsched scheduler: leading (lease kube-system/kube-scheduler" in line
                       for process in processes for line in process.lines) == 1
            assert metric(leader, "leader_election_master_status").endswith(" 1.0")
            standby = next(process for process in processes if process is not leader)
            assert metric(standby, "leader_election_master_status").endswith(" 0.0")

            assert leader.process is not None
            stopped_at = time.monotonic()
            leader.process.send_signal(signal.SIGTERM)
            second = await new_holder(client, processes, first, within=10)
            handover_s = time.monotonic() - stopped_at
            assert leader.process.wait(15) == 0, leader.log()
            assert "podsched scheduler: released the lease kube-system/kube-scheduler" in leader.log()
            assert handover_s <= RELEASE_BOUND_S, f"handover took {handover_s:.2f}s"
            pods = await submit_and_wait_bound(client, namespace, "after", 5)
            assert fenced_by(pods) == {second}


@pytest.mark.timing
async def test_a_killed_leader_is_replaced_within_the_lease_and_tokens_grow(
    fresh_apiserver: ApiServerProcess, namespace: str
) -> None:
    async with Client(fresh_apiserver.address) as client:
        await client.create(node("node-1", cpu="8", memory="16Gi", pods="110"))
        with replicas(fresh_apiserver.address, 2) as processes:
            first = await new_holder(client, processes, "", within=15)
            before = await client.get("leases", "kube-scheduler", "kube-system")
            leader = leader_of(processes, first)
            assert leader.process is not None
            killed_at = time.monotonic()
            leader.process.kill()
            second = await new_holder(client, processes, first, within=10)
            failover_s = time.monotonic() - killed_at
            assert failover_s <= KILL_BOUND_S, f"failover took {failover_s:.2f}s"
            after = await client.get("leases", "kube-scheduler", "kube-system")
            assert after.spec.lease_transitions == before.spec.lease_transitions + 1  # type: ignore[attr-defined]
            pods = await submit_and_wait_bound(client, namespace, "p", 3)
            token = int(pods[0].metadata.annotations[FENCE_ANNOTATION].rpartition("@")[2])
            assert fenced_by(pods) == {second}
            assert token > int(before.metadata.resource_version)


@pytest.mark.timing
async def test_a_leader_paused_past_its_lease_steps_down_without_landing_a_write(
    fresh_apiserver: ApiServerProcess, namespace: str
) -> None:
    async with Client(fresh_apiserver.address) as client:
        await client.create(node("node-1", cpu="8", memory="16Gi", pods="110"))
        with replicas(fresh_apiserver.address, 2) as processes:
            first = await new_holder(client, processes, "", within=15)
            await submit_and_wait_bound(client, namespace, "warm", 3)
            paused = leader_of(processes, first)
            assert paused.process is not None
            paused.process.send_signal(signal.SIGSTOP)
            second = await new_holder(client, processes, first, within=LEASE_S + 10)
            # Pods the paused leader hears of only after it wakes: it may try to bind them.
            pods_task = asyncio.create_task(submit_and_wait_bound(client, namespace, "while-paused", 10))
            await asyncio.sleep(0.3)
            paused.process.send_signal(signal.SIGCONT)
            pods = await pods_task
            assert paused.process.wait(15) == 1, paused.log()
            assert "podsched scheduler: leader election lost" in paused.log()
            assert fenced_by(pods) == {second}
            assert await holder(client) == second
            # Its events too: every event about those pods was written in the new leader's term (the
            # paused one's "FailedScheduling ... refused a fenced bind" never lands on them).
            events = await eventually(
                lambda: scheduled_events(client, namespace, {p.metadata.name for p in pods}),
                "a Scheduled event for every pod", within=30,
            )
            assert {event.metadata.annotations.get(WRITTEN_ANNOTATION, "").rpartition("@")[0]
                    for event in events} == {second}, [(e.reason, e.message) for e in events]


async def scheduled_events(
    client: Client, namespace: str, names: set[str]
) -> list[objects_pb2.Event] | None:
    """Every event about the pods ``names``, once each of them has its Scheduled event; None until then."""
    events = [e for e in (await client.list("events", namespace)).items
              if e.involved_object.name in names]  # type: ignore[attr-defined]
    scheduled = {e.involved_object.name for e in events if e.reason == "Scheduled"}  # type: ignore[attr-defined]
    return events if scheduled == names else None  # type: ignore[return-value]


async def test_the_flags_override_the_config_files_leader_election(
    fresh_apiserver: ApiServerProcess, tmp_path: Path
) -> None:
    config = tmp_path / "scheduler.yaml"
    config.write_text(yaml.safe_dump({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "leaderElection": {
            "leaderElect": False, "leaseDuration": "7s", "renewDeadline": "5s", "retryPeriod": "1s",
            "resourceName": "from-config", "resourceNamespace": "kube-system",
        },
    }))
    async with Client(fresh_apiserver.address) as client:
        process = SchedulerProcess(["--server", fresh_apiserver.address, "--metrics-addr", "127.0.0.1:0",
                                    "--config", str(config), "--leader-elect=true",
                                    "--leader-elect-resource-name", "from-flag"], env=cli_env(""), cwd=REPO)
        process.start()
        try:
            lease = await eventually(lambda: _lease_or_none(client, "from-flag"), "the lease from-flag")
            assert lease.spec.holder_identity == process.identity
            assert lease.spec.lease_duration_seconds == 7
            with contextlib.suppress(NotFound):
                await client.get("leases", "from-config", "kube-system")
                raise AssertionError("the config's lease name was used although the flag overrides it")
        finally:
            process.stop()


async def _lease_or_none(client: Client, name: str) -> objects_pb2.Lease | None:
    try:
        return await client.get("leases", name, "kube-system")  # type: ignore[return-value]
    except NotFound:
        return None


class DelayingProxy:
    """A TCP relay between one scheduler and the API server that can hold what the scheduler sends — a
    network that delays packets — and deliver it later, even after the scheduler has died (the relay
    keeps its side of the connection open). Nothing is parsed or changed: bytes in, bytes out."""

    def __init__(self, upstream: str) -> None:
        self._host, _, port = upstream.rpartition(":")
        self._port = int(port)
        self._server: asyncio.Server | None = None
        self._held: list[tuple[asyncio.StreamWriter, bytearray]] = []
        self._holding = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: list[asyncio.StreamWriter] = []

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        return f"127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    def hold(self) -> None:
        self._holding = True

    async def deliver(self) -> int:
        """Send everything held, in order; how many bytes that was."""
        self._holding = False
        sent = 0
        for upstream, held in self._held:
            upstream.write(bytes(held))
            await upstream.drain()
            sent += len(held)
            held.clear()
        return sent

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for writer in self._writers:
            writer.close()
        if self._server is not None:
            self._server.close()

    async def _relay(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        upstream_reader, upstream_writer = await asyncio.open_connection(self._host, self._port)
        self._writers += [client_writer, upstream_writer]
        held = bytearray()
        self._held.append((upstream_writer, held))

        async def to_server() -> None:
            while data := await client_reader.read(65536):
                if self._holding:
                    held.extend(data)
                else:
                    upstream_writer.write(data)
                    await upstream_writer.drain()
            # The scheduler is gone; its requests may still be on their way (held): keep the line open.

        async def to_client() -> None:
            with contextlib.suppress(ConnectionError):
                while data := await upstream_reader.read(65536):
                    client_writer.write(data)
                    await client_writer.drain()

        for pump in (to_server(), to_client()):
            task = asyncio.create_task(pump)
            self._tasks.add(task)


@pytest.mark.timing
async def test_binds_delayed_past_the_takeover_are_refused_by_the_fence(
    fresh_apiserver: ApiServerProcess, namespace: str
) -> None:
    """The case fencing exists for (what client-go cannot prevent): the leader's binds are held up in
    the network, the leader dies, a standby takes over, and then the old binds arrive. The API server
    refuses every one of them, because their fencing token names a tenure that has ended."""
    proxy = DelayingProxy(fresh_apiserver.address)
    relayed = await proxy.start()
    try:
        async with Client(fresh_apiserver.address) as client:
            await client.create(node("node-1", cpu="8", memory="16Gi", pods="110"))
            with replicas(relayed, 1) as (old,):
                await new_holder(client, [old], "", within=15)
                # The relay runs on this event loop: start the standby without blocking it.
                standby = replica(fresh_apiserver.address)
                try:
                    await asyncio.to_thread(standby.start)
                    await asyncio.to_thread(standby.wait_ready)
                    proxy.hold()
                    late = [pod(f"late-{i}", namespace, image=IMAGE, **POD_REQUESTS) for i in range(5)]
                    await asyncio.gather(*(client.create(pod) for pod in late))
                    # The old leader hears of the pods (its watch still flows) and sends their binds,
                    # which the network holds; it dies before its renew deadline would stop it.
                    await asyncio.sleep(0.6)
                    assert old.process is not None
                    old.process.kill()
                    await new_holder(client, [standby], old.identity, within=LEASE_S + 5)
                    assert await proxy.deliver() > 0

                    async def refused() -> list[str] | None:
                        lines = [line for line in fresh_apiserver.log().splitlines()
                                 if "refused a fenced bind of Pod" in line and f'"{old.identity}"' in line]
                        return lines or None

                    await eventually(refused, "the API server refusing the old leader's late binds")

                    async def all_bound() -> list[objects_pb2.Pod] | None:
                        pods: list[objects_pb2.Pod] = list((await client.list("pods", namespace)).items)  # type: ignore[arg-type]
                        return pods if len(pods) == 5 and all(p.spec.node_name for p in pods) else None

                    bound = await eventually(all_bound, "the five pods bound by the new leader", within=30)
                    assert fenced_by(bound) == {standby.identity}
                    assert await holder(client) == standby.identity
                finally:
                    await asyncio.to_thread(standby.stop)
    finally:
        await proxy.close()
