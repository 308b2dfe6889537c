"""DynamicResources in a real `podsched scheduler` process, against a real API server on etcd: a pod with a
ResourceClaim goes to the node whose ResourceSlice has a device its class selects, and the claim's
status shows the allocation and the pod in reservedFor."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from google.protobuf import json_format

from cluster.api import objects_pb2
from cluster.client import Client
from cluster.launcher.process import ApiServerProcess, SchedulerProcess
from tests import builders
from tests.integration.conftest import own_apiserver
from tests.integration.helpers import node_manifest
from tests.integration.test_scheduler import all_bound, apply, eventually, running_scheduler

pytestmark = pytest.mark.etcd

DRIVER = "gpu.example.com"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServerProcess]:
    with own_apiserver("etcd", tmp_path_factory.mktemp("dra-cluster"), name_prefix="dra") as server:
        yield server


@pytest.fixture(scope="module")
def scheduler(cluster: ApiServerProcess) -> Iterator[SchedulerProcess]:
    with running_scheduler(cluster.address) as process:
        yield process


async def test_a_pod_with_a_claim_goes_where_the_device_is(
    cluster: ApiServerProcess, scheduler: SchedulerProcess, api: Client, namespace: str, tmp_path: Path
) -> None:
    apply(cluster.address, tmp_path, node_manifest("plain"), node_manifest("gpu-node"))
    await api.create(builders.device_class("gpu", f'device.driver == "{DRIVER}"'))
    await api.create(builders.resource_slice("gpu-node-gpus", DRIVER, "gpu-node", "gpu-0",
                                             node_name="gpu-node"))
    claim = builders.resource_claim("trainer-gpu", builders.device_request("gpu", "gpu"), namespace=namespace)
    await api.create(claim)
    pod = json_format.ParseDict({
        "metadata": {"name": "trainer", "namespace": namespace},
        "spec": {"containers": [{"name": "c", "image": "trainer",
                                 "resources": {"claims": [{"name": "gpu"}]}}],
                 "resourceClaims": [{"name": "gpu", "resourceClaimName": "trainer-gpu"}]},
    }, objects_pb2.Pod())
    await api.create(pod)

    (bound,) = await eventually(lambda: all_bound(api, namespace, 1), "trainer bound")
    assert bound.spec.node_name == "gpu-node"
    written: objects_pb2.ResourceClaim = await api.get("resourceclaims", "trainer-gpu", namespace)
    allocation = written.status.allocation
    assert [(r.request, r.driver, r.pool, r.device) for r in allocation.devices.results] == [
        ("gpu", DRIVER, "gpu-node", "gpu-0")]
    assert allocation.HasField("allocation_timestamp")
    assert [(c.resource, c.name, c.uid) for c in written.status.reserved_for] == [
        ("pods", "trainer", bound.metadata.uid)]
