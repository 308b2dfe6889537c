"""Shared GPUs in a real `podsched scheduler` process, against a real API server on etcd: a node's two GPUs
as the trace importer publishes them (`podsched replay --gpus devices`: devices of 1000 `milli` each that
claims may share) take four pods asking half a GPU each, two on each device, each allocation consuming
its 500; a fifth waits, unschedulable, until one of the four leaves and the resourceclaim controller frees
its share."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest

from cluster.api import objects_pb2
from cluster.api.kinds import POD, RESOURCE_CLAIM
from cluster.client import Client
from cluster.launcher.process import ApiServerProcess, SchedulerProcess
from cluster.simulate.outcome import unschedulable_message
from cluster.simulate.trace.build import new_node, new_pod
from cluster.simulate.trace.devices import as_devices
from cluster.simulate.trace.model import GPU_MILLI_ANNOTATION, Trace, TracePod
from tests.integration.conftest import own_apiserver
from tests.integration.test_scheduler import eventually, running_scheduler

pytestmark = pytest.mark.etcd

NAMESPACE = "inference"
NODE = "gpu-node"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    with own_apiserver("etcd", tmp_path_factory.mktemp("shared-gpus"), name_prefix="shared") as server:
        yield server


@pytest.fixture(scope="module")
def scheduler(cluster: ApiServerProcess) -> Iterator[SchedulerProcess]:
    with running_scheduler(cluster.address) as process:
        yield process


def half_gpu_pods(count: int) -> Trace:
    """One node of two GPUs and ``count`` pods asking 500 thousandths of one, with their GPUs as devices."""
    node = new_node(NODE, {"cpu": "8", "memory": "32Gi"}, 2, {"nvidia.com/gpu.product": "A100"})
    pods = []
    for index in range(count):
        pod = new_pod(f"half-{index}", NAMESPACE, {"cpu": "100m"}, 1)
        pod.metadata.annotations[GPU_MILLI_ANNOTATION] = "500"
        pods.append(TracePod(pod, 0.0, None, f"pod {index}"))
    return as_devices(Trace([node], pods, [], "native-csv"))


async def create(api: Client, entry: TracePod) -> None:
    assert entry.claim is not None
    await api.create(entry.claim)
    await api.create(entry.pod)


async def claim_devices(api: Client, names: list[str]) -> dict[str, tuple[str, str]] | None:
    """Each allocated claim's one device and the milli it consumes; None while one is not allocated."""
    devices = {}
    for name in names:
        claim = await api.get(RESOURCE_CLAIM, name, NAMESPACE)
        assert isinstance(claim, objects_pb2.ResourceClaim)
        if not claim.status.HasField("allocation"):
            return None
        [result] = claim.status.allocation.devices.results
        assert (result.driver, result.pool) == ("gpu.podsched.io", NODE)
        devices[name] = (result.device, result.consumed_capacity["milli"])
    return devices


async def pod(api: Client, name: str) -> objects_pb2.Pod:
    got = await api.get(POD, name, NAMESPACE)
    assert isinstance(got, objects_pb2.Pod)
    return got


async def test_four_half_gpu_pods_share_two_gpus_and_a_fifth_waits_for_a_share(
        cluster: ApiServerProcess, scheduler: SchedulerProcess, api: Client) -> None:
    trace = half_gpu_pods(5)
    first, fifth = trace.pods[:4], trace.pods[4]
    names = [entry.pod.metadata.name for entry in first]
    for obj in [*trace.objects, *trace.nodes]:
        await api.create(obj)
    for entry in first:
        await create(api, entry)

    async def all_bound() -> list[objects_pb2.Pod] | None:
        pods = [await pod(api, name) for name in names]
        return pods if all(p.spec.node_name == NODE for p in pods) else None

    await eventually(all_bound, "the four half-GPU pods bound")
    shares = await eventually(lambda: claim_devices(api, names), "the four claims allocated")
    assert {milli for _, milli in shares.values()} == {"500"}
    assert Counter(device for device, _ in shares.values()) == {"gpu-0": 2, "gpu-1": 2}

    await create(api, fifth)

    async def unschedulable() -> str | None:
        return unschedulable_message(await pod(api, "half-4"))

    message = await eventually(unschedulable, "the fifth pod found unschedulable")
    assert "cannot allocate all claims" in message
    assert not (await pod(api, "half-4")).spec.node_name

    await api.delete(POD, "half-0", NAMESPACE, grace_period_seconds=0)

    async def bound_fifth() -> objects_pb2.Pod | None:
        got = await pod(api, "half-4")
        return got if got.spec.node_name else None

    await eventually(bound_fifth, "the fifth pod bound once a share is free")
    [(device, milli)] = (await eventually(lambda: claim_devices(api, ["half-4"]), "its claim")).values()
    assert (device, milli) == (shares["half-0"][0], "500"), "it took the share half-0 left"
