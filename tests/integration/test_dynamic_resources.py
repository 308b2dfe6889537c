"""DynamicResources in a real `podsched scheduler` process, against a real API server on etcd: a pod with a
ResourceClaim goes to the node whose ResourceSlice has a device its class selects, and the claim's
status shows the allocation and the pod in reservedFor; a claim the resourceclaim controller makes from
a template is allocated the same way, once it exists; an extended resource a DeviceClass serves gets a
claim the scheduler makes."""

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


async def test_a_pods_claim_made_from_a_template_is_allocated_where_a_device_is_free(
    cluster: ApiServerProcess, scheduler: SchedulerProcess, api: Client, namespace: str, tmp_path: Path
) -> None:
    """The resourceclaim controller makes the claim and records it in the pod's status; the scheduler,
    which kept the pod waiting until then, allocates a free device (the other test's is taken)."""
    apply(cluster.address, tmp_path, node_manifest("gpu-node-2"))
    await api.create(builders.device_class("any-gpu", f'device.driver == "{DRIVER}"'))
    await api.create(builders.resource_slice("gpu-node-2-gpus", DRIVER, "gpu-node-2", "gpu-1",
                                             node_name="gpu-node-2"))
    template = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "one-gpu", "namespace": namespace},
        "spec": {"spec": {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "any-gpu"}}]}}},
    }
    pod = {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "worker", "namespace": namespace},
        "spec": {"containers": [{"name": "c", "image": "worker", "resources": {"claims": [{"name": "gpu"}]}}],
                 "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]},
    }
    apply(cluster.address, tmp_path, template, pod)

    (bound,) = await eventually(lambda: all_bound(api, namespace, 1), "worker bound")
    assert bound.spec.node_name == "gpu-node-2"
    (status,) = bound.status.resource_claim_statuses
    written: objects_pb2.ResourceClaim = await api.get(
        "resourceclaims", status.resource_claim_name, namespace)
    assert [r.device for r in written.status.allocation.devices.results] == ["gpu-1"]
    assert [c.uid for c in written.status.reserved_for] == [bound.metadata.uid]


async def test_an_extended_resource_a_class_serves_is_allocated_from_its_devices(
    cluster: ApiServerProcess, scheduler: SchedulerProcess, api: Client, namespace: str, tmp_path: Path
) -> None:
    """A pod asking for example.com/gpu, which no node advertises, goes to the node with a device of the
    class whose extendedResourceName it is: the scheduler creates the pod's claim, allocates the device to
    it and records it in the pod's status."""
    apply(cluster.address, tmp_path, node_manifest("gpu-node-3"))
    served = builders.device_class("ext-gpu", 'device.driver == "ext.example.com"')
    served.spec.extended_resource_name = "example.com/gpu"
    await api.create(served)
    await api.create(builders.resource_slice("gpu-node-3-gpus", "ext.example.com", "gpu-node-3", "gpu-2",
                                             node_name="gpu-node-3"))
    gpu = {"example.com/gpu": "1"}
    apply(cluster.address, tmp_path, {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "ext-trainer", "namespace": namespace},
        "spec": {"containers": [{"name": "c", "image": "trainer",
                                 "resources": {"requests": gpu, "limits": gpu}}]},
    })

    (bound,) = await eventually(lambda: all_bound(api, namespace, 1), "ext-trainer bound")
    assert bound.spec.node_name == "gpu-node-3"
    status = bound.status.extended_resource_claim_status
    assert status.resource_claim_name.startswith("ext-trainer-extended-resources-")
    assert [(m.container_name, m.resource_name, m.request_name) for m in status.request_mappings] == [
        ("c", "example.com/gpu", "container-0-request-0")]
    written: objects_pb2.ResourceClaim = await api.get(
        "resourceclaims", status.resource_claim_name, namespace)
    assert written.metadata.annotations["resource.kubernetes.io/extended-resource-claim"] == "true"
    assert [(o.kind, o.uid, o.controller) for o in written.metadata.owner_references] == [
        ("Pod", bound.metadata.uid, True)]
    assert [r.device for r in written.status.allocation.devices.results] == ["gpu-2"]
    assert [c.uid for c in written.status.reserved_for] == [bound.metadata.uid]
