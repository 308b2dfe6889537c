"""The load generator (cluster/launcher/load.py) against the in-memory ApiServer on real loopback gRPC:
what it submits, its pacing, its counts of bound and lost pods, and how it rides out lost answers."""

from __future__ import annotations

import asyncio
import time

import grpc
import pytest

from cluster.api import errors, objects_pb2
from cluster.api.kinds import POD, POD_GROUP, unwrap
from cluster.client import Client
from cluster.launcher import load
from cluster.launcher.load import (
    CLAIM_NAME,
    COSCHEDULING_API_VERSION,
    POD_GROUP_LABEL,
    RUN_LABEL,
    VOLUME_NAME,
    LoadFailed,
    LoadGenerator,
    LoadSpec,
    LoadSpecError,
    Progress,
)
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
        pytest.param({"claim_template": "GPU_one"}, "claim_template", '"GPU_one" is invalid',
                     id="claim-template"),
        pytest.param({"volume_class": "Fast_Disk"}, "volume_class", '"Fast_Disk" is invalid',
                     id="volume-class"),
        pytest.param({"gang_fraction": -0.1}, "gang_fraction", "between 0 and 1, got -0.1",
                     id="gang-fraction-negative"),
        pytest.param({"gang_fraction": 1.5}, "gang_fraction", "between 0 and 1, got 1.5",
                     id="gang-fraction-big"),
        pytest.param({"gang_fraction": float("nan")}, "gang_fraction", "got nan", id="gang-fraction-nan"),
        pytest.param({"gang_size": (0, 3)}, "gang_size", "1 <= MIN <= MAX, got 0-3", id="gang-size-zero"),
        pytest.param({"gang_size": (5, 2)}, "gang_size", "1 <= MIN <= MAX, got 5-2", id="gang-size-reversed"),
        pytest.param({"gang_topology_key": "a/b/c"}, "gang_topology_key", '"a/b/c" is invalid',
                     id="gang-topology-key"),
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


def test_single_pods_claim_devices_through_the_claim_template_and_gang_members_do_not() -> None:
    spec = LoadSpec(rate=1, count=60, gang_fraction=0.5, seed=3, claim_template="one-gpu", run_id="abc123")
    submissions = list(spec.submissions())
    singles = [s.pods[0] for s in submissions if s.pod_group is None]
    members = [pod for s in submissions if s.pod_group is not None for pod in s.pods]

    assert singles and members
    for pod in singles:
        assert [(c.name, c.resource_claim_template_name) for c in pod.spec.resource_claims] == [
            (CLAIM_NAME, "one-gpu")]
        assert [c.name for c in pod.spec.containers[0].resources.claims] == [CLAIM_NAME]
    assert not any(pod.spec.resource_claims or pod.spec.containers[0].resources.claims for pod in members)
    assert not LoadSpec(rate=1).single(0).spec.resource_claims


def test_single_pods_have_an_ephemeral_volume_of_the_volume_class_and_gang_members_do_not() -> None:
    spec = LoadSpec(rate=1, count=60, gang_fraction=0.5, seed=3, volume_class="fast", run_id="abc123")
    submissions = list(spec.submissions())
    singles = [s.pods[0] for s in submissions if s.pod_group is None]
    members = [pod for s in submissions if s.pod_group is not None for pod in s.pods]

    assert singles and members
    for pod in singles:
        [volume] = pod.spec.volumes
        claim = volume.ephemeral.volume_claim_template.spec
        assert (volume.name, claim.storage_class_name, list(claim.access_modes)) == (
            VOLUME_NAME, "fast", ["ReadWriteOnce"])
        assert dict(claim.resources.requests) == {"storage": "1Gi"}
    assert not any(pod.spec.volumes for pod in members)
    assert not LoadSpec(rate=1).single(0).spec.volumes


def test_with_a_topology_key_every_gang_is_constrained_and_in_the_upstream_spelling() -> None:
    rack = "topology.kubernetes.io/rack"
    spec = LoadSpec(rate=1, count=80, gang_fraction=0.5, seed=7, gang_topology_key=rack, run_id="abc123")
    unconstrained = LoadSpec(rate=1, count=80, gang_fraction=0.5, seed=7, run_id="abc123")
    gangs = [s.pod_group for s in spec.submissions() if s.pod_group is not None]

    assert len(gangs) > 2
    assert all(g.api_version == POD_GROUP.api_version for g in gangs)
    assert all([c.key for c in g.spec.scheduling_constraints.topology] == [rack] for g in gangs)
    # The same draws: the same gangs, of the same sizes, only spelled and constrained otherwise.
    assert [[p.metadata.name for p in s.pods] for s in spec.submissions()] == [
        [p.metadata.name for p in s.pods] for s in unconstrained.submissions()]
    assert not any(s.pod_group.spec.scheduling_constraints.topology for s in unconstrained.submissions()
                   if s.pod_group is not None)


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


# ------------------------------------------------------------------------------------------- gangs


def _group_of(pod: objects_pb2.Pod) -> str:
    return pod.spec.scheduling_group.pod_group_name or pod.metadata.labels.get(POD_GROUP_LABEL, "")


def _minimum(group: objects_pb2.PodGroup) -> int:
    if group.api_version == COSCHEDULING_API_VERSION:
        return group.spec.min_member
    return group.spec.scheduling_policy.gang.min_count


def test_submissions_mix_gangs_of_both_spellings_with_single_pods_and_add_up_to_the_count() -> None:
    spec = LoadSpec(rate=1, count=200, gang_fraction=0.3, gang_size=(2, 8), seed=7, run_id="abc123")
    submissions = list(spec.submissions())
    pods = [pod for s in submissions for pod in s.pods]
    assert [pod.metadata.name for pod in pods] == [spec.pod_name(i) for i in range(200)]
    gangs = [s for s in submissions if s.pod_group is not None]
    singles = [s for s in submissions if s.pod_group is None]
    assert gangs and singles
    assert all(len(s.pods) == 1 and not _group_of(s.pods[0]) for s in singles)
    assert [g.pod_group.metadata.name for g in gangs] == [spec.pod_group_name(k) for k in range(len(gangs))]
    for gang in gangs:
        group = gang.pod_group
        assert group is not None
        assert 2 <= len(gang.pods) <= 8
        assert _minimum(group) == len(gang.pods), "a gang's minimum is its size: all or nothing"
        assert {_group_of(pod) for pod in gang.pods} == {group.metadata.name}
        assert group.metadata.labels[RUN_LABEL] == "abc123" and group.metadata.namespace == spec.namespace
        if group.api_version == COSCHEDULING_API_VERSION:
            assert group.spec.min_member and not group.spec.HasField("scheduling_policy")
            assert all(not pod.spec.HasField("scheduling_group") for pod in gang.pods)
        else:
            assert group.api_version == POD_GROUP.api_version and not group.spec.min_member
            assert all(POD_GROUP_LABEL not in pod.metadata.labels for pod in gang.pods)
    assert {g.pod_group.api_version for g in gangs if g.pod_group} == {
        COSCHEDULING_API_VERSION, POD_GROUP.api_version
    }
    # The same seed draws the same run; another seed another one.
    again = [(s.pod_group, s.pods) for s in LoadSpec(rate=1, count=200, gang_fraction=0.3, seed=7,
                                                       run_id="abc123").submissions()]
    assert again == [(s.pod_group, s.pods) for s in submissions]
    other = LoadSpec(rate=1, count=200, gang_fraction=0.3, seed=8, run_id="abc123").submissions()
    assert [len(s.pods) for s in other] != [len(s.pods) for s in submissions]


def test_submissions_shrink_the_last_gang_to_the_count_or_end_with_single_pods() -> None:
    shrunk = list(LoadSpec(rate=1, count=3, gang_fraction=1.0, gang_size=(2, 2), seed=1).submissions())
    assert [len(s.pods) for s in shrunk] == [2, 1] and shrunk[1].pod_group is None
    gangs = list(LoadSpec(rate=1, count=5, gang_fraction=1.0, gang_size=(4, 4), seed=1).submissions())
    assert [len(s.pods) for s in gangs] == [4, 1]
    exact = list(LoadSpec(rate=1, count=7, gang_fraction=1.0, gang_size=(3, 5), seed=3).submissions())
    assert sum(len(s.pods) for s in exact) == 7
    assert all(s.pod_group is not None and _minimum(s.pod_group) == len(s.pods) for s in exact
               if len(s.pods) >= 3)
    assert all(s.pod_group is None for s in LoadSpec(rate=1, count=20).submissions())


def test_spec_gives_upstream_gangs_the_priority_class() -> None:
    spec = LoadSpec(rate=1, priority_class="low")
    assert spec.pod_group(0, 3, coscheduling=False).spec.priority_class_name == "low"
    assert spec.member(4, spec.pod_group(0, 3, coscheduling=False)).spec.priority_class_name == "low"


async def test_creates_each_gangs_pod_group_before_its_pods(client: Client, fake: FakeApiServer) -> None:
    spec = LoadSpec(rate=500, count=30, namespace="ns1", gang_fraction=0.5, gang_size=(2, 4), seed=11)
    generator = LoadGenerator(client, spec)
    async with binding_every_pod(client, "ns1"):
        final = await generator.run(wait=True, wait_timeout_s=10)
    assert final.submitted == final.bound == 30
    created = [unwrap(request.object) for request in fake.calls_of("Create")]  # type: ignore[attr-defined]
    groups_seen: set[str] = set()
    for obj in created:
        if isinstance(obj, objects_pb2.PodGroup):
            groups_seen.add(obj.metadata.name)
        elif group := _group_of(obj):
            assert group in groups_seen, f"pod {obj.metadata.name} was created before its PodGroup {group}"
    assert generator.pod_groups == sorted(groups_seen, key=lambda name: int(name.rsplit("-", 1)[1]))
    assert final.gangs == len(generator.pod_groups) > 0
    assert f"({final.gangs} gangs)" in final.line(30)


async def test_stop_ends_the_run_after_the_gang_under_way(client: Client, fake: FakeApiServer) -> None:
    fake.hangs["Create"] = 0.02
    spec = LoadSpec(rate=1000, namespace="ns1", gang_fraction=1.0, gang_size=(4, 4), seed=5)
    generator = LoadGenerator(client, spec)
    running = asyncio.create_task(generator.run())
    await until(lambda: len(generator.submitted) % 4 == 2)  # in the middle of a gang
    generator.stop()
    final = await asyncio.wait_for(running, 5)
    assert final.submitted % 4 == 0 and final.submitted == 4 * len(generator.pod_groups)
    pods = [unwrap(r.object) for r in fake.calls_of("Create")]  # type: ignore[attr-defined]
    assert len([p for p in pods if isinstance(p, objects_pb2.Pod)]) == final.submitted
