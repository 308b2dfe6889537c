"""The load generator (cluster/launcher/load.py) against the in-memory ApiServer on real loopback gRPC:
what it submits, its pacing, its counts of bound and lost pods, and how it rides out lost answers."""

from __future__ import annotations

import asyncio
import time

import grpc
import pytest

from cluster.api import errors
from cluster.api.kinds import POD
from cluster.client import Client
from cluster.launcher import load
from cluster.launcher.load import RUN_LABEL, LoadFailed, LoadGenerator, LoadSpec, LoadSpecError, Progress
from tests.unit.bind_loop import binding_every_pod
from tests.unit.test_client_fake_apiserver import FakeApiServer, until


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        pytest.param({"rate": 0.0}, "rate", "positive number of pods per second, got 0", id="rate-zero"),
        pytest.param({"rate": -1.0}, "rate", "got -1", id="rate-negative"),
        pytest.param({"rate": float("inf")}, "rate", "got inf", id="rate-infinite"),
        pytest.param({"rate": float("nan")}, "rate", "got nan", id="rate-nan"),
        pytest.param({"count": 0}, "count", "at least 1, got 0", id="count-zero"),
        pytest.param({"cpu": "1x"}, "cpu", 'unable to parse quantity\'s suffix "x"', id="cpu-suffix"),
        pytest.param({"cpu": "0"}, "cpu", 'positive quantity, got "0"', id="cpu-zero"),
        pytest.param({"memory": "-1Mi"}, "memory", 'positive quantity, got "-1Mi"', id="memory-negative"),
        pytest.param({"memory": "lots"}, "memory", "quantities must match", id="memory-words"),
        pytest.param({"namespace": "Load_NS"}, "namespace", '"Load_NS" is invalid', id="namespace"),
        pytest.param({"priority_class": "Gold!"}, "priority_class", '"Gold!" is invalid',
                     id="priority-class"),
    ],
)
def test_spec_refuses_what_the_server_would_refuse(fields: dict[str, object], field: str, words: str) -> None:
    with pytest.raises(LoadSpecError) as caught:
        LoadSpec(**{"rate": 10.0, **fields})  # type: ignore[arg-type]
    assert caught.value.field == field
    assert words in caught.value.problem
    assert str(caught.value).startswith(f"{field}: ")


def test_spec_builds_labelled_pods_with_requests() -> None:
    spec = LoadSpec(rate=5, count=3, namespace="batch", cpu="250m", memory="1Gi", priority_class="low",
                    run_id="abc123")
    pod = spec.pod(7)
    assert pod.metadata.name == "load-abc123-7"
    assert pod.metadata.namespace == "batch"
    assert pod.metadata.labels[RUN_LABEL] == "abc123"
    assert spec.selector == f"{RUN_LABEL}=abc123"
    assert pod.spec.priority_class_name == "low"
    assert dict(pod.spec.containers[0].resources.requests) == {"cpu": "250m", "memory": "1Gi"}
    assert not LoadSpec(rate=1).pod(0).spec.priority_class_name
    # Each run gets its own id, so two runs never share a name or a selector.
    assert LoadSpec(rate=1).run_id != LoadSpec(rate=1).run_id


def test_progress_line() -> None:
    assert Progress(submitted=50, bound=47, lost=0, elapsed_s=5.0).line(100) == (
        "submitted 50/100, bound 47, pending 3 (10.0 pods/s)"
    )
    assert Progress(submitted=20, bound=10, lost=2, elapsed_s=4.0).line(None) == (
        "submitted 20, bound 10, pending 8, lost 2 (deleted before bound) (5.0 pods/s)"
    )


async def test_submits_every_pod_and_waits_until_each_is_bound(client: Client) -> None:
    spec = LoadSpec(rate=200, count=8, namespace="ns1")
    generator = LoadGenerator(client, spec)
    async with binding_every_pod(client, "ns1"):
        final = await generator.run(wait=True, wait_timeout_s=10)
    assert final.submitted == 8 and final.bound == 8 and final.pending == 0 and final.lost == 0
    assert generator.submitted == [spec.pod_name(i) for i in range(8)]
    assert set(generator.bound.values()) == {"node-1"}


async def test_paces_creates_at_the_rate(client: Client, fake: FakeApiServer) -> None:
    generator = LoadGenerator(client, LoadSpec(rate=20, count=6, namespace="ns1"))
    started = time.monotonic()
    await generator.run()
    took = time.monotonic() - started
    # Six pods at 20/s: the first at once, the last five intervals of 50 ms later.
    assert took >= 0.25
    assert len(fake.calls_of("Create")) == 6


async def test_reports_progress_while_running(client: Client) -> None:
    seen: list[Progress] = []
    generator = LoadGenerator(client, LoadSpec(rate=40, count=10, namespace="ns1"))
    await generator.run(on_progress=seen.append, progress_every_s=0.05)
    assert len(seen) >= 2
    assert [p.submitted for p in seen] == sorted(p.submitted for p in seen)
    assert all(p.bound == 0 and p.pending == p.submitted for p in seen)


async def test_a_pod_deleted_before_it_is_bound_fails_the_wait(client: Client, fake: FakeApiServer) -> None:
    spec = LoadSpec(rate=100, count=3, namespace="ns1")
    generator = LoadGenerator(client, spec)
    running = asyncio.create_task(generator.run(wait=True, wait_timeout_s=10))
    await until(lambda: len(generator.submitted) == 3)
    await fake.remove(POD, "ns1", spec.pod_name(1))
    with pytest.raises(LoadFailed, match=f"pods deleted before they were bound: {spec.pod_name(1)}$"):
        await running
    assert generator.progress().lost == 1


async def test_a_pod_deleted_after_it_was_bound_still_counts_as_bound(
    client: Client, fake: FakeApiServer
) -> None:
    spec = LoadSpec(rate=100, count=2, namespace="ns1")
    generator = LoadGenerator(client, spec)
    running = asyncio.create_task(generator.run(wait=True, wait_timeout_s=10))
    await until(lambda: len(generator.submitted) == 2)
    await client.bind("ns1", spec.pod_name(0), "node-1")
    await until(lambda: spec.pod_name(0) in generator.bound)
    # Done with (or preempted) after it ran: it was bound, not lost.
    await fake.remove(POD, "ns1", spec.pod_name(0))
    await client.bind("ns1", spec.pod_name(1), "node-2")
    final = await running
    assert (final.bound, final.lost, final.pending) == (2, 0, 0)
    assert generator.bound == {spec.pod_name(0): "node-1", spec.pod_name(1): "node-2"}


async def test_wait_timeout_names_the_pending_pods(client: Client) -> None:
    spec = LoadSpec(rate=100, count=2, namespace="ns1")
    generator = LoadGenerator(client, spec)
    pending = f"{spec.pod_name(0)}, {spec.pod_name(1)}"
    with pytest.raises(LoadFailed, match=rf"2 pods still pending after 0.3s: {pending}$"):
        await generator.run(wait=True, wait_timeout_s=0.3)


async def test_a_create_whose_answer_was_lost_counts_once(client: Client, fake: FakeApiServer) -> None:
    spec = LoadSpec(rate=100, count=2, namespace="ns1")
    # The first pod is already there, as after a create that landed but whose answer never came back.
    await fake.put(spec.pod(0))
    generator = LoadGenerator(client, spec)
    await generator.run()
    assert generator.submitted == [spec.pod_name(0), spec.pod_name(1)]
    assert generator.progress().submitted == 2


async def test_a_create_the_server_did_not_answer_is_sent_again(
    client: Client, fake: FakeApiServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(load, "CREATE_RETRY_PAUSE_S", 0.01)
    # A write past its deadline is not retried by the client (it may have landed): the generator does it.
    fake.fail("Create", grpc.StatusCode.DEADLINE_EXCEEDED, times=2)
    generator = LoadGenerator(client, LoadSpec(rate=100, count=2, namespace="ns1"))
    await generator.run()
    assert len(generator.submitted) == 2
    assert len(fake.calls_of("Create")) == 4


async def test_a_refused_create_ends_the_run(client: Client, fake: FakeApiServer) -> None:
    fake.fail("Create", grpc.StatusCode.INVALID_ARGUMENT, "no such priority class", times=1)
    generator = LoadGenerator(client, LoadSpec(rate=100, count=2, namespace="ns1"))
    with pytest.raises(errors.Invalid, match="no such priority class"):
        await generator.run()
    assert generator.submitted == []


async def test_without_a_count_it_submits_until_cancelled(client: Client) -> None:
    generator = LoadGenerator(client, LoadSpec(rate=100, namespace="ns1"))
    running = asyncio.create_task(generator.run())
    await until(lambda: len(generator.submitted) >= 5)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert len(generator.submitted) >= 5


async def test_bad_run_arguments(client: Client) -> None:
    with pytest.raises(ValueError, match="needs a count"):
        await LoadGenerator(client, LoadSpec(rate=1)).run(wait=True)
    with pytest.raises(ValueError, match="progress_every_s must be positive"):
        await LoadGenerator(client, LoadSpec(rate=1, count=1)).run(progress_every_s=0)
